import { tmpdir } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_MCP_FAILURE_TEXT, FakeMcpHttpServer, fakeMcpStdioLaunch } from '../../fakes/mcp/index.js';
import { withRunMarker } from '../../helpers/child-processes.js';

const TOKEN = 'mcp-test-token';
let fake: FakeMcpHttpServer;
/** Every client a test opened, closed after it whatever happened. */
let clients: Client[] = [];

beforeEach(async () => {
  fake = new FakeMcpHttpServer({ bearerToken: TOKEN });
  await fake.start();
});
afterEach(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  clients = [];
  await fake.stop();
});

function newClient(): Client {
  const client = new Client({ name: 'mcp-fake-test', version: '1.0.0' });
  clients.push(client);
  return client;
}

/** A client of the HTTP fake, sending `token` as its bearer (none when `null`). */
async function httpClient(token: string | null = TOKEN): Promise<Client> {
  const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
  const client = newClient();
  await client.connect(new StreamableHTTPClientTransport(new URL(fake.url), { requestInit: { headers } }));
  return client;
}

/** The stdio fake from a working directory away from the repository, with `env` added to the SDK's default environment. */
async function stdioClient(env: Record<string, string> = {}): Promise<Client> {
  const { command, args } = fakeMcpStdioLaunch();
  const client = newClient();
  await client.connect(new StdioClientTransport({ command, args, cwd: tmpdir(), env: withRunMarker({ ...getDefaultEnvironment(), ...env }), stderr: 'pipe' }));
  return client;
}

function text(result: Awaited<ReturnType<Client['callTool']>>): string {
  const [first] = result.content as { type: string; text?: string }[];
  return first?.text ?? '';
}

describe('FakeMcpHttpServer with the SDK client', () => {
  it('lists the six tools and answers lookup_order', async () => {
    const client = await httpClient();

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['big', 'fail', 'lookup_order', 'picture', 'read_env', 'wait_forever']);
    expect(client.getServerVersion()).toMatchObject({ name: 'fake-orders', version: '1.0.0' });

    const result = await client.callTool({ name: 'lookup_order', arguments: { order_id: 'A-1001' } });
    expect(text(result)).toBe('Order A-1001: shipped on 2026-11-30 via DHL.');
    expect(fake.record.calls).toContainEqual({ name: 'lookup_order', args: { order_id: 'A-1001' } });
    expect(fake.requests.every((request) => request.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it('refuses a client without the bearer token with 401', async () => {
    await expect(httpClient(null)).rejects.toMatchObject({ code: 401 });

    const response = await fetch(fake.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_token' });
  });

  it('answers fail with a tool error, and picture and big with their content', async () => {
    const client = await httpClient();

    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toBe(FAKE_MCP_FAILURE_TEXT);

    const picture = await client.callTool({ name: 'picture', arguments: {} });
    expect(picture.content).toMatchObject([{ type: 'image', mimeType: 'image/png' }, { type: 'text', text: 'A red dot.' }]);

    expect(text(await client.callTool({ name: 'big', arguments: { chars: 100_000 } }))).toHaveLength(100_000);
  });

  it('records wait_forever as cancelled when the caller aborts it', async () => {
    const client = await httpClient();
    const controller = new AbortController();

    const call = client.callTool({ name: 'wait_forever', arguments: {} }, undefined, { signal: controller.signal });
    await fake.waitFor(() => fake.record.calls.some((c) => c.name === 'wait_forever'));
    controller.abort('the user gave up');

    await expect(call).rejects.toThrow();
    await fake.waitFor(() => fake.record.cancelled.includes('wait_forever'));
  });

  it('serves concurrent sessions, each its own, and 503 while down', async () => {
    const [one, two] = await Promise.all([httpClient(), httpClient()]);
    expect(fake.sessionCount).toBe(2);
    const answers = await Promise.all([
      one.callTool({ name: 'lookup_order', arguments: { order_id: '1' } }),
      two.callTool({ name: 'lookup_order', arguments: { order_id: '2' } }),
    ]);
    expect(answers.map(text)).toEqual(['Order 1: shipped on 2026-11-30 via DHL.', 'Order 2: shipped on 2026-11-30 via DHL.']);

    fake.setDown(true);
    await expect(one.callTool({ name: 'lookup_order', arguments: { order_id: '3' } })).rejects.toMatchObject({ code: 503 });
    fake.setDown(false);
    expect(text(await one.callTool({ name: 'lookup_order', arguments: { order_id: '4' } }))).toContain('Order 4');

    await one.close();
    await two.close();
  });
});

describe('the stdio fake with the SDK client', () => {
  it('answers lookup_order and shows the environment it was given', async () => {
    const client = await stdioClient({ FAKE_MCP_TEST_VALUE: 'from-the-transport' });

    expect((await client.listTools()).tools).toHaveLength(6);
    expect(text(await client.callTool({ name: 'lookup_order', arguments: { order_id: 'B-7' } }))).toBe('Order B-7: shipped on 2026-11-30 via DHL.');
    expect(text(await client.callTool({ name: 'read_env', arguments: { name: 'FAKE_MCP_TEST_VALUE' } }))).toBe('FAKE_MCP_TEST_VALUE=from-the-transport');
    expect(text(await client.callTool({ name: 'read_env', arguments: { name: 'FAKE_MCP_UNSET' } }))).toBe('FAKE_MCP_UNSET is not set');
  });

  it('fails to start with FAKE_MCP_FAIL_START=1', async () => {
    await expect(stdioClient({ FAKE_MCP_FAIL_START: '1' })).rejects.toThrow();
  });

  it('exits after answering FAKE_MCP_EXIT_AFTER_CALLS tool calls', async () => {
    const client = await stdioClient({ FAKE_MCP_EXIT_AFTER_CALLS: '1' });
    const closed = new Promise<void>((resolve) => {
      client.onclose = () => resolve();
    });

    expect(text(await client.callTool({ name: 'lookup_order', arguments: { order_id: 'C-1' } }))).toContain('C-1');
    await closed;
    await expect(client.callTool({ name: 'lookup_order', arguments: { order_id: 'C-2' } })).rejects.toThrow();
  });
});
