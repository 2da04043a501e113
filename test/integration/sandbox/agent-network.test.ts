import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeBubblewrap, sandboxUserFor, systemLayout } from '../../../src/agent/sandbox/bubblewrap.js';
import { sandboxConfigSchema } from '../../../src/agent/sandbox/config.js';
import { createContextResolver } from '../../../src/agent/sandbox/context.js';
import { createSandboxTools } from '../../../src/agent/sandbox/tools.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { silentLogger } from '../../../src/logger.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime } from '../../../src/runtime/types.js';
import { type FakeChatRequest, FakeOpenAI } from '../../fakes/openai/index.js';
import { openTestDatabase } from '../../helpers/database.js';

/** An agent's `sandbox: { network: false }` in its config.yaml reaches its shells through the runtime. */

const SHIPPED_AGENTS = fileURLToPath(new URL('../../../agents', import.meta.url));

describe.skipIf(process.platform !== 'linux')('per-agent sandbox.network, through the embedded runtime', () => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  let root: string;
  let runtime: AgentRuntime;
  let listener: Server;
  let port: number;

  beforeAll(async () => {
    const user = sandboxUserFor(process.getuid?.());
    const probe = await probeBubblewrap({ searchPath: process.env.PATH, user });
    if (!probe.isAvailable) throw new Error(`bubblewrap is required for these tests: ${probe.reason}`);
    root = await mkdtemp(join(tmpdir(), 'dfc-agent-network-'));
    const agentsDir = join(root, 'agents');
    cpSync(join(SHIPPED_AGENTS, 'lead'), join(agentsDir, 'lead'), { recursive: true });
    mkdirSync(join(agentsDir, 'offline'), { recursive: true });
    writeFileSync(join(agentsDir, 'offline', 'config.yaml'), 'name: offline\nsandbox:\n  network: false\n');
    listener = createServer((socket) => socket.end('hello\n'));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
    database = await openTestDatabase('pglite');
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    runtime = await createEmbeddedRuntime({
      db: database.db,
      models: [{ name: 'default', model: 'gpt-4o-mini', base_url: model.baseURL, api_key: 'sk-test', timeout_seconds: 30, max_retries: 0 }],
      agentsDir,
      logger: silentLogger(),
      tools: createSandboxTools({
        resolveContext: createContextResolver({ dataDir: join(root, 'data'), skillsDir: join(root, 'skills'), owner: user }),
        config: sandboxConfigSchema.parse({ bash_timeout_seconds: 20 }),
        baseEnv: { PATH: process.env.PATH },
        bubblewrap: { bwrapPath: probe.bwrapPath, user, system: systemLayout() },
      }),
      shellIsolation: { isShellIsolated: true, isIsolationExplicit: true },
    });
  });

  afterAll(async () => {
    await runtime?.close();
    await model?.stop();
    await database?.close();
    await new Promise((resolve) => listener?.close(resolve));
    if (root !== undefined) await rm(root, { recursive: true, force: true });
  });

  async function connectAs(agentName: string | undefined): Promise<string> {
    const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -n1 <&3 || echo refused`;
    model.requests.length = 0;
    model.enqueue({ toolCalls: [{ name: 'bash', args: { description: 'connect', command } }] }, { text: 'ok' });
    const thread = (await runtime.createThread()).thread_id;
    await runtime.waitRun(thread, {
      assistant_id: 'lead_agent',
      input: { messages: [{ role: 'human', content: 'connect' }] },
      context: { user_id: 'alice', ...(agentName === undefined ? {} : { agent_name: agentName }) },
    });
    const tool = (model.requests[1] as FakeChatRequest).messages.findLast((m) => m.role === 'tool');
    return String(tool?.content);
  }

  it('the default agent reaches a 127.0.0.1 listener; the agent with network: false cannot', async () => {
    expect(await connectAs(undefined)).toBe('hello\n');
    expect(await connectAs('offline')).toMatch(/refused/);
  });
});
