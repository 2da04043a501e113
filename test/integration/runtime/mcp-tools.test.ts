import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/agent/config.js';
import { mcpServersConfigSchema } from '../../../src/agent/mcp/config.js';
import { McpServers } from '../../../src/agent/mcp/servers.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { silentLogger } from '../../../src/logger.js';
import { extractFinalText } from '../../../src/manager/response.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime, RunRequest } from '../../../src/runtime/types.js';
import { FakeMcpHttpServer, fakeMcpStdioLaunch } from '../../fakes/mcp/index.js';
import { type FakeChatRequest, FakeOpenAI } from '../../fakes/openai/index.js';
import { Waiters } from '../../fakes/waiters.js';
import { withRunMarker } from '../../helpers/child-processes.js';
import { openTestDatabase } from '../../helpers/database.js';

/**
 * MCP servers' tools through the embedded runtime and the real `ChatOpenAI`: a stdio server (a
 * child process on the official SDK) and a streamable HTTP one on 127.0.0.1, connected by
 * `McpServers` as the server connects them at start.
 */

const HTTP_TOKEN = 'mcp-http-secret-token';
const STDIO_SECRET = 'orders-secret-value';

/** Conditions on things no fake announces (a server's state): re-checked every 50 ms. */
const polling = new Waiters('mcp-tools test', { pollMs: 50 });
const until = (predicate: () => boolean | undefined, timeoutMs: number) => polling.waitFor(predicate, timeoutMs);

function ask(text: string, context: Record<string, unknown> = {}): RunRequest {
  return { assistant_id: 'lead_agent', input: { messages: [{ role: 'human', content: text }] }, context: { user_id: 'alice', ...context } };
}

function toolNames(request: FakeChatRequest | undefined): string[] {
  return (request?.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
}

function toolResults(request: FakeChatRequest | undefined): string[] {
  return (request?.messages ?? []).filter((message) => message.role === 'tool').map((message) => String(message.content));
}

function systemPrompt(request: FakeChatRequest | undefined): string {
  return String(request?.messages[0]?.content ?? '');
}

describe('MCP tools through the embedded runtime', () => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  let http: FakeMcpHttpServer;
  let agentsDir: string;
  let models: ModelConfig[];
  const opened: { runtime: AgentRuntime; mcp: McpServers }[] = [];

  async function runtimeWith(servers: Record<string, unknown>): Promise<{ runtime: AgentRuntime; mcp: McpServers }> {
    const mcp = new McpServers(mcpServersConfigSchema.parse(servers), silentLogger());
    mcp.start();
    const runtime = await createEmbeddedRuntime({ db: database.db, models, agentsDir, logger: silentLogger(), mcp });
    opened.push({ runtime, mcp });
    return { runtime, mcp };
  }

  /** The stdio fake; its environment carries the test run's marker, so a process left running fails the run. */
  function stdioServer({ env = {}, ...extra }: { env?: Record<string, string>; [key: string]: unknown } = {}) {
    return { ...fakeMcpStdioLaunch(), access: 'everyone', env: withRunMarker(env), ...extra };
  }

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    http = new FakeMcpHttpServer({ bearerToken: HTTP_TOKEN });
    await http.start();
    agentsDir = mkdtempSync(join(tmpdir(), 'dfc-mcp-agents-'));
    for (const [name, config] of [
      ['lead', undefined],
      ['support', 'mcp_tools: [orders__lookup_order]\n'],
      ['silent', 'mcp_tools: []\n'],
    ] as const) {
      mkdirSync(join(agentsDir, name));
      writeFileSync(join(agentsDir, name, 'SOUL.md'), `You are ${name}.`);
      if (config !== undefined) writeFileSync(join(agentsDir, name, 'config.yaml'), config);
    }
  });
  afterEach(async () => {
    for (const { runtime, mcp } of opened.splice(0)) {
      await runtime.close();
      await mcp.close();
    }
    await model?.stop();
  });
  afterAll(async () => {
    await http?.stop();
    await database?.close();
    if (agentsDir) rmSync(agentsDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    // A model of its own per test: replies one test queued and did not use never reach the next.
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    models = [{ name: 'default', model: 'gpt-4o-mini', base_url: model.baseURL, api_key: 'sk-test', timeout_seconds: 30, max_retries: 0 }];
    http.setDown(false);
  });

  it('offers both servers’ tools with prefixed names and answers from a tool result', async () => {
    const { runtime, mcp } = await runtimeWith({
      orders: stdioServer(),
      remote: { url: http.url, headers: { Authorization: `Bearer ${HTTP_TOKEN}` }, access: 'everyone' },
    });
    model.enqueue(
      { toolCalls: [{ name: 'orders__lookup_order', args: { order_id: '42' } }] },
      { toolCalls: [{ name: 'remote__lookup_order', args: { order_id: '43' } }] },
      { text: 'Both orders have shipped.' },
    );
    const { values } = await runtime.waitRun((await runtime.createThread()).thread_id, ask('Where are orders 42 and 43?'));
    expect(extractFinalText(values)).toBe('Both orders have shipped.');
    const names = toolNames(model.requests[0]);
    for (const server of ['orders', 'remote']) {
      for (const tool of ['lookup_order', 'read_env', 'fail', 'wait_forever', 'picture', 'big']) expect(names).toContain(`${server}__${tool}`);
    }
    expect(toolResults(model.requests[2])).toEqual(['Order 42: shipped on 2026-11-30 via DHL.', 'Order 43: shipped on 2026-11-30 via DHL.']);
    expect(http.record.calls).toEqual([{ name: 'lookup_order', args: { order_id: '43' } }]);
    expect(http.requests.every((request) => request.headers.authorization === `Bearer ${HTTP_TOKEN}`)).toBe(true);
    expect(mcp.status()).toEqual({
      orders: { state: 'ready', tools: 6, access: 'everyone' },
      remote: { state: 'ready', tools: 6, access: 'everyone' },
    });
  });

  it('gives a stdio server the variables it is configured with and none of the server’s own', async () => {
    process.env.DFC_MCP_TEST_SERVER_SECRET = 'the-server-own-secret';
    try {
      const { runtime } = await runtimeWith({ orders: stdioServer({ env: { ORDERS_TOKEN: STDIO_SECRET } }) });
      model.enqueue(
        { toolCalls: [{ name: 'orders__read_env', args: { name: 'ORDERS_TOKEN' } }] },
        { toolCalls: [{ name: 'orders__read_env', args: { name: 'DFC_MCP_TEST_SERVER_SECRET' } }] },
        { text: 'Done.' },
      );
      await runtime.waitRun((await runtime.createThread()).thread_id, ask('Check the environment.'));
      expect(toolResults(model.requests[2])).toEqual([`ORDERS_TOKEN=${STDIO_SECRET}`, 'DFC_MCP_TEST_SERVER_SECRET is not set']);
    } finally {
      delete process.env.DFC_MCP_TEST_SERVER_SECRET;
    }
  });

  it('keeps a server that fails to start out of the run, says so in the prompt and in its status, and the others work', async () => {
    const { runtime, mcp } = await runtimeWith({
      orders: stdioServer(),
      broken: { command: join(agentsDir, 'no-such-program'), access: 'everyone' },
      refused: { url: http.url, access: 'everyone' },
    });
    model.enqueue({ toolCalls: [{ name: 'orders__lookup_order', args: { order_id: '7' } }] }, { text: 'Order 7 has shipped.' });
    const { values } = await runtime.waitRun((await runtime.createThread()).thread_id, ask('Where is order 7?'));
    expect(extractFinalText(values)).toBe('Order 7 has shipped.');
    const names = toolNames(model.requests[0]);
    expect(names).toContain('orders__lookup_order');
    expect(names.some((name) => name.startsWith('broken__') || name.startsWith('refused__'))).toBe(false);
    const prompt = systemPrompt(model.requests[0]);
    expect(prompt).toContain('<unavailable_tools>');
    expect(prompt).toMatch(/- broken: it could not be started or reached \(.*ENOENT.*\)/);
    expect(prompt).toMatch(/- refused: it could not be started or reached \(HTTP 401: .*\)/);
    const status = mcp.status();
    expect(status.orders).toEqual({ state: 'ready', tools: 6, access: 'everyone' });
    expect(status.broken).toMatchObject({ state: 'failed', tools: 0 });
    expect(status.refused).toMatchObject({ state: 'failed', tools: 0 });
    expect(JSON.stringify(status)).not.toContain(HTTP_TOKEN);
  });

  it('offers a trusted server’s tools to trusted senders only, and an everyone server’s to all', async () => {
    const { runtime } = await runtimeWith({ orders: stdioServer({ access: 'trusted' }), remote: { url: http.url, headers: { Authorization: `Bearer ${HTTP_TOKEN}` }, access: 'everyone' } });
    model.enqueue({ text: 'Hello stranger.' }, { text: 'Hello friend.' });
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Hi', { trusted_sender: false }));
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Hi', { trusted_sender: true }));
    const [stranger, friend] = model.requests.map(toolNames);
    expect(stranger?.some((name) => name.startsWith('orders__'))).toBe(false);
    expect(stranger).toContain('remote__lookup_order');
    expect(friend).toContain('orders__lookup_order');
    expect(friend).toContain('remote__lookup_order');
    // Not offered is not down: the stranger is not told about tools it may not use.
    expect(systemPrompt(model.requests[0])).not.toContain('orders');
  });

  it('offers a custom agent only the tools of its allow-list', async () => {
    const { runtime } = await runtimeWith({ orders: stdioServer(), remote: { url: http.url, headers: { Authorization: `Bearer ${HTTP_TOKEN}` }, access: 'everyone' } });
    model.enqueue({ text: 'Support here.' }, { text: 'Silent here.' }, { text: 'Lead here.' });
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Hi', { agent_name: 'support' }));
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Hi', { agent_name: 'silent' }));
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Hi'));
    const [support, silent, lead] = model.requests.map(toolNames);
    expect(support?.filter((name) => name.includes('__'))).toEqual(['orders__lookup_order']);
    expect(silent?.filter((name) => name.includes('__'))).toEqual([]);
    expect(lead?.filter((name) => name.includes('__'))).toHaveLength(12);
  });

  it('hands the model a tool’s own error, a cut long result and a note for a picture, and the run goes on', async () => {
    const { runtime } = await runtimeWith({ orders: stdioServer({ max_output_chars: 1_000 }) });
    model.enqueue(
      { toolCalls: [{ name: 'orders__fail', args: {} }] },
      { toolCalls: [{ name: 'orders__big', args: { chars: 5_000 } }] },
      { toolCalls: [{ name: 'orders__picture', args: {} }] },
      { text: 'The order database is offline.' },
    );
    const { values } = await runtime.waitRun((await runtime.createThread()).thread_id, ask('Check everything.'));
    expect(extractFinalText(values)).toBe('The order database is offline.');
    const [failure, big, picture] = toolResults(model.requests[3]);
    expect(failure).toBe('Error: orders__fail failed: the order database is offline');
    expect(big).toBe(`${'x'.repeat(1_000)}\n[... the result goes on; cut at 1000 characters ...]`);
    expect(picture).toBe('A red dot.\n\n[the tool also returned a picture or sound, not shown here]');
  });

  it('cancels the tool call on the server when the run is cancelled', async () => {
    const { runtime } = await runtimeWith({ remote: { url: http.url, headers: { Authorization: `Bearer ${HTTP_TOKEN}` }, access: 'everyone' } });
    model.enqueue({ toolCalls: [{ name: 'remote__wait_forever', args: {} }] }, { text: 'never' });
    const thread = await runtime.createThread();
    const controller = new AbortController();
    const run = runtime.waitRun(thread.thread_id, ask('Wait.'), { signal: controller.signal }).catch((error: unknown) => error);
    await until(() => http.record.calls.some((call) => call.name === 'wait_forever'), 30_000);
    controller.abort();
    await until(() => http.record.cancelled.includes('wait_forever'), 30_000);
    expect(await run).toMatchObject({ code: 'RUN_CANCELLED' });
    expect(model.requests).toHaveLength(1);
  });

  it('notices a server that went down, tells the run, and takes its tools back once it answers again', async () => {
    const { runtime, mcp } = await runtimeWith({ remote: { url: http.url, headers: { Authorization: `Bearer ${HTTP_TOKEN}` }, access: 'everyone' } });
    await until(() => mcp.status().remote?.state === 'ready', 30_000);
    http.setDown(true);
    model.enqueue({ toolCalls: [{ name: 'remote__lookup_order', args: { order_id: '9' } }] }, { text: 'The order service is down.' });
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Where is order 9?'));
    expect(toolResults(model.requests[1])).toEqual(['Error: the MCP server "remote" could not run remote__lookup_order; it may be down.']);
    await until(() => mcp.status().remote?.state === 'failed', 30_000);

    model.requests.length = 0;
    model.enqueue({ text: 'It is down.' });
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Where is order 9 now?'));
    expect(toolNames(model.requests[0]).some((name) => name.startsWith('remote__'))).toBe(false);
    expect(systemPrompt(model.requests[0])).toMatch(/- remote: it stopped answering/);

    http.setDown(false);
    await until(() => mcp.status().remote?.state === 'ready', 60_000);
    model.requests.length = 0;
    model.enqueue({ toolCalls: [{ name: 'remote__lookup_order', args: { order_id: '9' } }] }, { text: 'Order 9 has shipped.' });
    const { values } = await runtime.waitRun((await runtime.createThread()).thread_id, ask('And now?'));
    expect(extractFinalText(values)).toBe('Order 9 has shipped.');
    expect(toolResults(model.requests[1])).toEqual(['Order 9: shipped on 2026-11-30 via DHL.']);
  });

  it('notices a stdio server whose process exited and starts it again', async () => {
    const { runtime, mcp } = await runtimeWith({ orders: stdioServer({ env: { FAKE_MCP_EXIT_AFTER_CALLS: '1' } }) });
    model.enqueue({ toolCalls: [{ name: 'orders__lookup_order', args: { order_id: '1' } }] }, { text: 'Shipped.' });
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Where is order 1?'));
    expect(toolResults(model.requests[1])).toEqual(['Order 1: shipped on 2026-11-30 via DHL.']);
    await until(() => mcp.status().orders?.state === 'failed', 30_000);
    expect(mcp.status().orders?.reason).toBe('the server closed the connection');
    await until(() => mcp.status().orders?.state === 'ready', 60_000);
  });
});
