import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeMcpHttpServer, fakeMcpStdioLaunch } from '../fakes/mcp/index.js';
import type { FakeChatRequest } from '../fakes/openai/index.js';
import { TEST_RUN_VARIABLE } from '../helpers/child-processes.js';
import { startTelegramChat, type TelegramSetup } from './telegram-setup.js';

/**
 * MCP servers as `mcp_servers:` in the config file configures them, through the real server and
 * Telegram: a stdio server started by the server with a secret from the server's environment, a
 * streamable HTTP server reached with a bearer token from it, and a server that cannot start,
 * which costs the agent its tools and nothing else.
 */

const CHAT_ID = 9400;
const ORDERS_TOKEN = 'orders-token-from-the-environment';
const REMOTE_TOKEN = 'remote-token-from-the-environment';
const SERVER_SECRET = 'a-secret-only-the-server-has';

let setup: TelegramSetup | undefined;
let remote: FakeMcpHttpServer;

describe('MCP tools, from a Telegram chat', () => {
  beforeAll(async () => {
    remote = new FakeMcpHttpServer({ bearerToken: REMOTE_TOKEN });
    await remote.start();
    const orders = fakeMcpStdioLaunch();
    const runMarker = process.env[TEST_RUN_VARIABLE];
    setup = await startTelegramChat(
      '',
      `mcp_servers:
  orders:
    command: ${JSON.stringify(orders.command)}
    args: ${JSON.stringify(orders.args)}
    env: { ORDERS_TOKEN: $ORDERS_TOKEN${runMarker === undefined ? '' : `, ${TEST_RUN_VARIABLE}: ${JSON.stringify(runMarker)}`} }
    access: everyone
  remote:
    url: ${JSON.stringify(remote.url)}
    headers: { Authorization: "Bearer \${REMOTE_TOKEN}" }
    access: everyone
  broken:
    command: /nonexistent/mcp-server
    access: everyone
`,
      { ORDERS_TOKEN, REMOTE_TOKEN, SERVER_SECRET },
    );
  });
  afterAll(async () => {
    await setup?.stop();
    await remote?.stop();
  });

  it('answers with both servers’ tools, shows each server in /health, and keeps the server’s secrets from the stdio server', async () => {
    const { telegram, model, server } = setup as TelegramSetup;
    model.enqueue(
      {
        toolCalls: [
          { name: 'orders__lookup_order', args: { order_id: '42' } },
          { name: 'remote__lookup_order', args: { order_id: '43' } },
          { name: 'orders__read_env', args: { name: 'ORDERS_TOKEN' } },
          { name: 'orders__read_env', args: { name: 'SERVER_SECRET' } },
        ],
      },
      { text: 'Orders 42 and 43 shipped on 30 November.' },
    );
    const sent = telegram.sendUserMessage({ chatId: CHAT_ID, chatType: 'private', text: 'Where are my orders 42 and 43?' });
    await telegram.waitFor(
      () => telegram.botMessages(CHAT_ID).find((m) => m.replyTo === sent.message_id && m.text === 'Orders 42 and 43 shipped on 30 November.'),
      60_000,
    );

    const first = model.requests[0] as FakeChatRequest;
    const offered = (first.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
    expect(offered).toContain('orders__lookup_order');
    expect(offered).toContain('remote__lookup_order');
    expect(offered.some((name) => name.startsWith('broken__'))).toBe(false);
    expect(String(first.messages[0]?.content)).toMatch(/<unavailable_tools>[\s\S]*- broken: it could not be started or reached/);

    const results = (model.requests.at(-1) as FakeChatRequest).messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
    expect(results).toEqual([
      'Order 42: shipped on 2026-11-30 via DHL.',
      'Order 43: shipped on 2026-11-30 via DHL.',
      `ORDERS_TOKEN=${ORDERS_TOKEN}`,
      'SERVER_SECRET is not set',
    ]);
    expect(remote.requests.length).toBeGreaterThan(0);
    expect(remote.requests.every((request) => request.headers.authorization === `Bearer ${REMOTE_TOKEN}`)).toBe(true);

    const health = (await (await fetch(`${server.url}/health`)).json()) as { ok: boolean; mcp: Record<string, Record<string, unknown>> };
    expect(health.ok).toBe(true);
    expect(health.mcp.orders).toEqual({ state: 'ready', tools: 6, access: 'everyone' });
    expect(health.mcp.remote).toEqual({ state: 'ready', tools: 6, access: 'everyone' });
    expect(health.mcp.broken).toMatchObject({ state: 'failed', tools: 0, reason: expect.stringMatching(/^it could not be started or reached \(.*ENOENT/) });
  }, 120_000);
});
