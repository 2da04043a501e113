import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/agent/config.js';
import { sandboxConfigSchema } from '../../../src/agent/sandbox/config.js';
import { createContextResolver } from '../../../src/agent/sandbox/context.js';
import { createSandboxTools } from '../../../src/agent/sandbox/tools.js';
import { type DatabaseHandle, schema } from '../../../src/db/index.js';
import { AppError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { extractFinalText } from '../../../src/manager/response.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { ShellIsolation } from '../../../src/runtime/embedded/run-request.js';
import type { AgentRuntime, RunRequest } from '../../../src/runtime/types.js';
import { type FakeChatRequest, FakeOpenAI } from '../../fakes/openai/index.js';
import { openTestDatabase } from '../../helpers/database.js';

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));
const SECRET_VALUES = ['sk-live-do-not-leak', 'ghp_do_not_leak', 'hunter2-do-not-leak', 'pg-password-do-not-leak'];

function ask(text: string, context: Record<string, unknown> = {}, extra: Partial<RunRequest> = {}): RunRequest {
  return {
    assistant_id: 'lead_agent',
    input: { messages: [{ role: 'human', content: text }] },
    context: { user_id: 'alice', channel_user_id: '100200300', ...context },
    ...extra,
  };
}

function toolNames(request: FakeChatRequest): string[] {
  return (request.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
}

/** The content of the tool message answering the previous model call. */
function lastToolResult(request: FakeChatRequest): string {
  const message = request.messages.findLast((m) => m.role === 'tool');
  return typeof message?.content === 'string' ? message.content : JSON.stringify(message?.content);
}

function systemPrompt(request: FakeChatRequest): string {
  const message = request.messages.find((m) => m.role === 'system');
  return typeof message?.content === 'string' ? message.content : '';
}

describe('the lead agent with its sandbox, through the embedded runtime', () => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  let dataDir: string;
  let models: ModelConfig[];
  let runtime: AgentRuntime;

  async function newRuntime(
    bashAccess: 'trusted' | 'everyone' | 'nobody' = 'trusted',
    timeoutSeconds = 5,
    shellIsolation?: ShellIsolation,
  ): Promise<AgentRuntime> {
    return createEmbeddedRuntime({
      db: database.db,
      models,
      agentsDir: AGENTS_DIR,
      logger: silentLogger(),
      tools: createSandboxTools({
        resolveContext: createContextResolver({ dataDir, skillsDir: join(dataDir, 'no-skills') }),
        config: sandboxConfigSchema.parse({ bash_timeout_seconds: timeoutSeconds, max_output_chars: 2000 }),
        baseEnv: {
          PATH: process.env.PATH,
          OPENAI_API_KEY: SECRET_VALUES[0],
          GH_PAT: SECRET_VALUES[1],
          ADMIN_PASSWORD: SECRET_VALUES[2],
          DATABASE_URL: `postgres://app:${SECRET_VALUES[3]}@127.0.0.1/app`,
          HARMLESS_SETTING: 'visible',
        },
      }),
      bashAccess,
      ...(shellIsolation === undefined ? {} : { shellIsolation }),
    });
  }

  async function newThread(): Promise<string> {
    return (await runtime.createThread()).thread_id;
  }

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    dataDir = await mkdtemp(join(tmpdir(), 'dfc-agent-tools-'));
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    models = [{ name: 'default', model: 'gpt-4o-mini', base_url: model.baseURL, api_key: 'sk-test', timeout_seconds: 30, max_retries: 0 }];
    runtime = await newRuntime();
  });
  afterAll(async () => {
    await runtime.close();
    await model.stop();
    await database.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    model.requests.length = 0;
    model.respond = () => ({ text: 'done' });
  });

  it('runs a bash command and answers with its output quoted', async () => {
    model.enqueue(
      { toolCalls: [{ name: 'bash', args: { description: 'greet', command: 'echo hello-from-bash; pwd' } }] },
      { text: 'The command printed hello-from-bash.' },
    );
    const threadId = await newThread();
    const { values } = await runtime.waitRun(threadId, ask('run echo'));
    expect(extractFinalText(values)).toBe('The command printed hello-from-bash.');
    const result = lastToolResult(model.requests[1] as FakeChatRequest);
    expect(result).toContain('hello-from-bash');
    // The working directory is shown as the agent's view, never the host path.
    expect(result).toContain('/mnt/user-data/workspace');
    expect(result).not.toContain(dataDir);
  });

  it("never lets the server's secrets into bash, and exports the chat sender's platform id for that call", async () => {
    model.enqueue({ toolCalls: [{ name: 'bash', args: { description: 'env', command: 'env' } }] }, { text: 'ok' });
    await runtime.waitRun(await newThread(), ask('show env'));
    const output = lastToolResult(model.requests[1] as FakeChatRequest);
    for (const secret of SECRET_VALUES) expect(output).not.toContain(secret);
    expect(output).not.toMatch(/^(OPENAI_API_KEY|GH_PAT|ADMIN_PASSWORD|DATABASE_URL)=/m);
    // Allow-list, not deny-list: a name nobody listed stays behind, however harmless it looks.
    expect(output).not.toContain('HARMLESS_SETTING');
    expect(output).toMatch(/^PATH=/m);
    expect(output).toContain('DEERFLOW_CHANNEL_USER_ID=100200300');
  });

  it("gives a run's secrets to its commands only, masked in their output, and stores them nowhere", async () => {
    const secret = 'ghs_run_scoped_secret_value';
    model.enqueue(
      { toolCalls: [{ name: 'bash', args: { description: 'use the token', command: 'echo "token=$GH_TOKEN"; printenv GH_TOKEN | wc -c' } }] },
      { text: 'done' },
    );
    const threadId = await newThread();
    const { run } = await runtime.waitRun(threadId, ask('comment on the issue'), { sandboxSecrets: { GH_TOKEN: secret, 'bad name': 'x' } });
    const output = lastToolResult(model.requests[1] as FakeChatRequest);
    expect(output).toBe(`token=***\n${secret.length + 1}\n`);
    // Not in the model's view, the run record, the thread state, or any checkpoint row.
    expect(JSON.stringify(model.requests)).not.toContain(secret);
    expect(JSON.stringify(await runtime.getRun(threadId, run.run_id))).not.toContain(secret);
    expect(JSON.stringify(await runtime.getThread(threadId))).not.toContain(secret);
    for (const table of [schema.checkpoints, schema.checkpointBlobs, schema.checkpointWrites, schema.runs]) {
      const rows = await database.db.select().from(table);
      expect(Buffer.from(JSON.stringify(rows, (_key, value) => (value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : value)))).not.toContain(
        Buffer.from(secret),
      );
    }
    // The next run of the same thread has no secrets.
    model.enqueue({ toolCalls: [{ name: 'bash', args: { description: 'again', command: 'printenv GH_TOKEN || echo none' } }] }, { text: 'done' });
    await runtime.waitRun(threadId, ask('again'));
    expect(lastToolResult(model.requests[3] as FakeChatRequest)).toBe('none\n');
  });

  it('writes a file into the thread outputs and presents it', async () => {
    model.enqueue(
      { toolCalls: [{ name: 'write_file', args: { description: 'report', path: '/mnt/user-data/outputs/report.md', content: '# Report\n' } }] },
      { toolCalls: [{ name: 'present_files', args: { filepaths: ['/mnt/user-data/outputs/report.md'] } }] },
      { text: 'Here is your report.' },
    );
    const threadId = await newThread();
    const { values } = await runtime.waitRun(threadId, ask('write a report'));
    const hostFile = join(dataDir, 'users', 'alice', 'threads', threadId, 'user-data', 'outputs', 'report.md');
    expect(await readFile(hostFile, 'utf8')).toBe('# Report\n');
    expect(lastToolResult(model.requests[2] as FakeChatRequest)).toContain('Presented 1 file(s): /mnt/user-data/outputs/report.md');
    expect(extractFinalText(values)).toBe('Here is your report.');
  });

  it('refuses paths that escape the thread folders with a tool error, and the run goes on', async () => {
    model.enqueue(
      { toolCalls: [{ name: 'read_file', args: { description: 'peek', path: '/mnt/user-data/workspace/../../../../etc/passwd' } }] },
      { text: 'I cannot read that.' },
    );
    const { values } = await runtime.waitRun(await newThread(), ask('read /etc/passwd'));
    const result = lastToolResult(model.requests[1] as FakeChatRequest);
    expect(result).toMatch(/^Error: /);
    expect(result).not.toContain('root:');
    expect(extractFinalText(values)).toBe('I cannot read that.');
  });

  it('keeps bash from senders the channel does not trust, but not the file tools', async () => {
    await runtime.waitRun(await newThread(), ask('hi', { trusted_sender: false }));
    const untrusted = model.requests[0] as FakeChatRequest;
    expect(toolNames(untrusted)).not.toContain('bash');
    expect(toolNames(untrusted)).toEqual(expect.arrayContaining(['ls', 'read_file', 'write_file', 'str_replace', 'present_files', 'ask_clarification']));
    expect(systemPrompt(untrusted)).toContain('Shell commands are not available');

    await runtime.waitRun(await newThread(), ask('hi', { trusted_sender: true }));
    expect(toolNames(model.requests[1] as FakeChatRequest)).toContain('bash');
  });

  it('follows sandbox.bash_access: everyone gives strangers bash (isolation: none chosen), nobody takes it from all', async () => {
    const open = await newRuntime('everyone', 5, { isShellIsolated: false, isIsolationExplicit: true });
    const closed = await newRuntime('nobody');
    try {
      await open.waitRun((await open.createThread()).thread_id, ask('hi', { trusted_sender: false }));
      await closed.waitRun((await closed.createThread()).thread_id, ask('hi', { trusted_sender: true }));
      expect(toolNames(model.requests[0] as FakeChatRequest)).toContain('bash');
      expect(toolNames(model.requests[1] as FakeChatRequest)).not.toContain('bash');
    } finally {
      await open.close();
      await closed.close();
    }
  });

  it('keeps an unisolated shell from strangers even with bash_access: everyone, unless no isolation was chosen', async () => {
    const unisolated = await newRuntime('everyone');
    try {
      await unisolated.waitRun((await unisolated.createThread()).thread_id, ask('hi', { trusted_sender: false }));
      await unisolated.waitRun((await unisolated.createThread()).thread_id, ask('hi', { trusted_sender: true }));
      expect(toolNames(model.requests[0] as FakeChatRequest)).not.toContain('bash');
      expect(toolNames(model.requests[1] as FakeChatRequest)).toContain('bash');
    } finally {
      await unisolated.close();
    }
  });

  it('ends the turn with the question when the agent asks for clarification, and takes the answer next turn', async () => {
    model.enqueue({
      toolCalls: [
        {
          name: 'ask_clarification',
          args: { question: 'Staging or production?', clarification_type: 'approach_choice', options: ['staging', 'production'] },
        },
      ],
    });
    const threadId = await newThread();
    const first = await runtime.waitRun(threadId, ask('deploy the app'));
    expect(model.requests).toHaveLength(1);
    expect(extractFinalText(first.values)).toBe('Staging or production?\n\n1. staging\n2. production');

    model.enqueue({ text: 'Deploying to staging.' });
    const second = await runtime.waitRun(threadId, ask('staging'));
    expect(extractFinalText(second.values)).toBe('Deploying to staging.');
    const transcript = (model.requests[1] as FakeChatRequest).messages.map((m) => m.content);
    expect(transcript).toEqual(expect.arrayContaining(['Staging or production?\n\n1. staging\n2. production', 'staging']));
  });

  it('does not offer ask_clarification when the caller cannot answer', async () => {
    await runtime.waitRun(await newThread(), ask('hi', { disable_clarification: true }));
    expect(toolNames(model.requests[0] as FakeChatRequest)).not.toContain('ask_clarification');
  });

  it('answers an unknown tool and malformed arguments with tool errors instead of crashing the run', async () => {
    model.enqueue(
      { toolCalls: [{ name: 'rm_everything', args: {} }] },
      { toolCalls: [{ name: 'bash', args: { description: 'no command' } }] },
      { text: 'Recovered.' },
    );
    const { values } = await runtime.waitRun(await newThread(), ask('do it'));
    expect(lastToolResult(model.requests[1] as FakeChatRequest)).toMatch(/rm_everything/);
    expect(lastToolResult(model.requests[2] as FakeChatRequest)).toMatch(/command/);
    expect(extractFinalText(values)).toBe('Recovered.');
  });

  it('survives tool-call arguments that are not JSON', async () => {
    model.enqueue({ toolCalls: [{ name: 'bash', args: {}, rawArguments: '{"command": "echo' }] }, { text: 'Recovered.' });
    const threadId = await newThread();
    await runtime.waitRun(threadId, ask('do it'));
    // The thread stays usable: the next turn runs and the model is not handed a dangling call.
    model.enqueue({ text: 'Next answer.' });
    const { values } = await runtime.waitRun(threadId, ask('again'));
    expect(extractFinalText(values)).toBe('Next answer.');
  });

  it('stops a model that never stops calling tools at the recursion limit and says so', async () => {
    model.respond = () => ({ toolCalls: [{ name: 'bash', args: { description: 'loop', command: 'echo again' } }] });
    const threadId = await newThread();
    const error = await runtime.waitRun(threadId, ask('loop forever', {}, { config: { recursion_limit: 6 } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('RECURSION_LIMIT');
    expect((error as AppError).userMessage).toContain('6 steps');
    expect((await runtime.getThread(threadId)).status).toBe('idle');
  });

  it('bounds huge and binary command output', async () => {
    model.enqueue(
      { toolCalls: [{ name: 'bash', args: { description: 'noise', command: 'head -c 200000 /dev/urandom; seq 1 100000' } }] },
      { text: 'ok' },
    );
    await runtime.waitRun(await newThread(), ask('make noise'));
    expect(lastToolResult(model.requests[1] as FakeChatRequest).length).toBeLessThan(3000);
  });
});
