import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatRequest, FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { apiClient, type Json } from './api-client.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * A team's server with accounts: the operator creates users, each binds their Telegram account
 * with a one-time code from the API, and from then on their chats run as them. Driven only as
 * people do: HTTP with API keys, and messages through the fake Telegram.
 */

const ADMIN_TOKEN = 'operator-token-for-e2e-tests';
const UNBOUND = 'Connect this channel from DeerFlow Settings, complete the in-channel connect step, then send your message again.';
const CONNECTED = 'Telegram connected to DeerFlow.';
const INVALID = 'Telegram connection link is invalid or expired.';

let telegram: FakeTelegram;
let model: FakeOpenAI;
let server: ServerProcess;
let dataDir: string;
let nextChat = 9100;

const api = apiClient(() => server.url);

async function createUser(name: string): Promise<{ id: string; key: string }> {
  const created = await api('POST', '/api/users', ADMIN_TOKEN, { name });
  expect(created.status).toBe(201);
  return { id: created.body?.user.id, key: created.body?.api_key };
}

async function connectCode(key: string): Promise<string> {
  const response = await api('POST', '/api/channels/telegram/connect', key);
  expect(response.status).toBe(200);
  return response.body?.code;
}

/** Sends a message and resolves with the bot's reply to it once it is no longer the placeholder (or `final` accepts it). */
async function replyText(chatId: number, text: string, final: (text: string) => boolean = (t) => t !== 'Working on it...'): Promise<string> {
  const sent = telegram.sendUserMessage({ chatId, chatType: 'private', text });
  const reply = await telegram.waitFor(() => {
    const found = telegram.botMessages(chatId).find((m) => m.replyTo === sent.message_id);
    return found && final(found.text) ? found : undefined;
  }, 15_000);
  return reply.text;
}

/** Background work (memory extraction) has no chat message to wait for: ask until it is done. */
async function poll<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  telegram = new FakeTelegram();
  model = new FakeOpenAI({ apiKey: 'sk-e2e' });
  model.respond = (request: FakeChatRequest) => {
    const system = request.messages.find((m) => m.role === 'system')?.content;
    if (typeof system === 'string' && system.startsWith('You maintain the long-term memory')) {
      const learns = JSON.stringify(request.messages).includes('remember that I deploy on Fridays');
      const newFacts = learns ? [{ content: 'Deploys on Fridays', category: 'behavior', confidence: 0.9 }] : [];
      return { text: JSON.stringify({ user: {}, newFacts, factsToRemove: [] }) };
    }
    const text = lastUserText(request.messages);
    const usedTool = request.messages.at(-1)?.role === 'tool';
    if (text === 'save a note' && !usedTool) {
      return { toolCalls: [{ name: 'write_file', args: { description: 'note', path: '/mnt/user-data/workspace/note.txt', content: 'hi' } }] };
    }
    return { text: usedTool ? 'Saved.' : `Echo: ${text}` };
  };
  await Promise.all([telegram.start(), model.start()]);
  const config = writeConfig(`server: { port: 0 }
auth: { admin_token: ${ADMIN_TOKEN} }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
memory: { debounce_seconds: 0 }
channel_connections:
  enabled: true
  max_failed_codes_per_minute: 3
  telegram: { enabled: true, bot_username: test_bot }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1, allowed_users: [] }
`);
  dataDir = join(config.dir, '.data');
  server = await startServerProcess(['--config', config.path], { cwd: config.dir });
});
afterAll(async () => {
  await server?.stop();
  await Promise.all([telegram?.stop(), model?.stop()]);
});
beforeEach(() => {
  nextChat++;
});

describe('accounts and binding through the real server', () => {
  it('binds a Telegram account with a one-time code and runs its chats as that user', async () => {
    const ana = await createUser('ana');
    const chatId = nextChat;
    // Not bound: told how to connect, nothing runs.
    expect(await replyText(chatId, 'hello?')).toBe(UNBOUND);

    const offer = await api('POST', '/api/channels/telegram/connect', ana.key);
    expect(offer.body).toMatchObject({ provider: 'telegram', mode: 'deep_link', expires_in: 600 });
    expect(offer.body?.url).toBe(`https://t.me/test_bot?start=${offer.body?.code}`);
    expect(offer.body?.instruction).toBe(`Send /start ${offer.body?.code} to the DeerFlow Telegram bot.`);

    expect(await replyText(chatId, `/start ${offer.body?.code}`)).toBe(CONNECTED);
    const { body } = await api('GET', '/api/channels/connections', ana.key);
    expect(body?.connections).toEqual([
      expect.objectContaining({ provider: 'telegram', status: 'connected', external_account_id: String(chatId), workspace_id: String(chatId) }),
    ]);
    const providers = await api('GET', '/api/channels/providers', ana.key);
    expect(providers.body?.providers[0]).toMatchObject({ provider: 'telegram', connectable: true, connection_status: 'connected' });

    // Now chats run as ana: the answer comes, and her files live in her bucket, not the chat id's.
    expect(await replyText(chatId, 'hello again', (t) => t === 'Echo: hello again')).toBe('Echo: hello again');
    expect(await replyText(chatId, 'save a note', (t) => t === 'Saved.')).toBe('Saved.');
    expect(existsSync(join(dataDir, 'users', ana.id))).toBe(true);
    expect(existsSync(join(dataDir, 'users', String(chatId)))).toBe(false);
    // Memory too: learned from the chat, it is ana's, visible to her key and to /memory in the chat.
    await replyText(chatId, 'remember that I deploy on Fridays', (t) => t.startsWith('Echo: remember'));
    const memory = await poll(async () => {
      const response = await api('GET', '/api/memory', ana.key);
      return response.body?.facts.length > 0 ? response.body : undefined;
    });
    expect(memory).toMatchObject({ user_id: ana.id, facts: [{ content: 'Deploys on Fridays' }] });
    expect(await replyText(chatId, '/memory')).toBe('Memory contains 1 fact(s).\n• Deploys on Fridays');

    // Replaying the same code fails; the code never shows up in the server's logs.
    expect(await replyText(chatId, `/start ${offer.body?.code}`)).toBe(INVALID);
    expect(JSON.stringify(server.logs)).not.toContain(offer.body?.code);
  });

  it('lets a second user take the same Telegram account over', async () => {
    const chatId = nextChat;
    const first = await createUser('ben');
    const second = await createUser('cleo');
    expect(await replyText(chatId, `/start ${await connectCode(first.key)}`)).toBe(CONNECTED);
    expect(await replyText(chatId, `/start ${await connectCode(second.key)}`)).toBe(CONNECTED);
    const [firstRows, secondRows] = await Promise.all([
      api('GET', '/api/channels/connections', first.key),
      api('GET', '/api/channels/connections', second.key),
    ]);
    expect(firstRows.body?.connections.map((c: { status: string }) => c.status)).toEqual(['revoked']);
    expect(secondRows.body?.connections.map((c: { status: string }) => c.status)).toEqual(['connected']);
    // cleo disconnects: the chat is unbound again.
    const id = secondRows.body?.connections[0].id;
    expect((await api('DELETE', `/api/channels/connections/${id}`, first.key)).status).toBe(404);
    expect((await api('DELETE', `/api/channels/connections/${id}`, second.key)).status).toBe(204);
    expect(await replyText(chatId, 'still me?')).toBe(UNBOUND);
  });

  it('refuses guessed codes, then stops reading codes from that account for a while', async () => {
    const chatId = nextChat;
    const dana = await createUser('dana');
    for (const guess of ['aaaa', 'bbbb', 'cccc']) expect(await replyText(chatId, `/start ${guess}`)).toBe(INVALID);
    // Past the limit even a real code is refused unread (and stays valid for later).
    const code = await connectCode(dana.key);
    expect(await replyText(chatId, `/start ${code}`)).toContain('Too many connection attempts');
    expect((await api('GET', '/api/channels/connections', dana.key)).body?.connections).toEqual([]);
  });

  it('shows the operator the audit trail of refused codes, newest first and paged, never a code; users get 403', async () => {
    const chatId = nextChat;
    const gus = await createUser('gus');
    for (const guess of ['dddd', 'eeee', 'ffff']) expect(await replyText(chatId, `/start ${guess}`)).toBe(INVALID);
    const code = await connectCode(gus.key);
    expect(await replyText(chatId, `/start ${code}`)).toContain('Too many connection attempts');

    const trail = await api('GET', '/api/audit/connections?limit=200', ADMIN_TOKEN);
    expect(trail.status).toBe(200);
    const mine = trail.body?.events.filter((e: Json) => e.external_account_id === String(chatId));
    expect(mine.map((e: Json) => e.event_type)).toEqual(['code_refused_account_limit', 'code_rejected', 'code_rejected', 'code_rejected']);
    expect(mine[0]).toEqual({
      id: expect.any(String),
      seq: expect.any(Number),
      event_type: 'code_refused_account_limit',
      provider: 'telegram',
      external_account_id: String(chatId),
      workspace_id: String(chatId),
      user_id: null,
      connection_id: null,
      created_at: expect.any(String),
    });
    expect(JSON.stringify(trail.body)).not.toContain(code);
    expect(JSON.stringify(trail.body)).not.toContain('dddd');

    const first = await api('GET', '/api/audit/connections?limit=2', ADMIN_TOKEN);
    expect(first.body?.events).toHaveLength(2);
    const second = await api('GET', `/api/audit/connections?limit=2&before=${first.body?.next_before}`, ADMIN_TOKEN);
    expect(second.body?.events[0].seq).toBeLessThan(first.body?.events[1].seq);
    const paged: Json[] = [...(first.body?.events ?? []), ...(second.body?.events ?? [])];
    expect(trail.body?.events.slice(0, 4).map((e: Json) => e.id)).toEqual(paged.map((e) => e.id));

    expect((await api('GET', '/api/audit/connections', gus.key)).status).toBe(403);
    expect((await api('GET', '/api/audit/connections', undefined)).status).toBe(401);
    expect((await api('GET', '/api/audit/connections?limit=201', ADMIN_TOKEN)).status).toBe(400);
    expect((await api('GET', '/api/audit/connections?before=abc', ADMIN_TOKEN)).status).toBe(400);
  });

  it('caps pending codes at 5 per user and provider', async () => {
    const erin = await createUser('erin');
    for (let i = 0; i < 5; i++) expect((await api('POST', '/api/channels/telegram/connect', erin.key)).status).toBe(200);
    const sixth = await api('POST', '/api/channels/telegram/connect', erin.key);
    expect(sixth).toEqual({
      status: 429,
      body: { code: 'TOO_MANY_PENDING_CODES', message: 'Too many pending channel connection codes. Wait for existing codes to expire or use one of them.' },
    });
  });

  it('answers bad keys, bad bodies, unknown providers and the operator on user routes without hints', async () => {
    const missing = await api('GET', '/api/channels/providers', undefined);
    const wrong = await api('GET', '/api/channels/providers', 'dfc_not-a-key');
    expect(missing).toEqual({ status: 401, body: { code: 'UNAUTHORIZED', message: 'Missing or invalid API key.' } });
    expect(wrong).toEqual(missing);
    expect((await api('GET', '/api/threads/00000000-0000-4000-8000-000000000000', undefined)).status).toBe(401);
    expect((await api('POST', '/api/users', 'dfc_not-a-key', { name: 'x' })).status).toBe(401);
    const user = await createUser('fay');
    expect((await api('POST', '/api/users', user.key, { name: 'x' })).status).toBe(403);
    expect((await api('POST', '/api/users', ADMIN_TOKEN, { name: '' })).status).toBe(400);
    expect((await api('POST', '/api/users', ADMIN_TOKEN, { name: 'fay' })).status).toBe(409);
    expect((await api('POST', '/api/users', ADMIN_TOKEN, { name: 'x'.repeat(65) })).status).toBe(400);
    expect((await api('POST', '/api/channels/nope/connect', user.key)).body).toEqual({ code: 'NOT_FOUND', message: 'Unknown channel provider' });
    // Only platforms this build has are providers.
    expect((await api('POST', '/api/channels/buzz/connect', user.key)).status).toBe(404);
    expect((await api('GET', '/api/channels/providers', ADMIN_TOKEN)).status).toBe(403);
    expect((await api('GET', '/api/me', user.key)).body).toMatchObject({ user: { name: 'fay' }, is_operator: false });
    expect((await api('GET', '/api/me', ADMIN_TOKEN)).body).toEqual({ user: null, is_operator: true });
    // Skills are switched for the whole server: only the operator may.
    expect((await api('PUT', '/api/skills/data-analysis', user.key, { enabled: false })).status).toBe(403);
    expect((await api('GET', '/api/skills', user.key)).status).toBe(200);
    expect((await api('PUT', '/api/skills/data-analysis', ADMIN_TOKEN, { enabled: true })).body).toMatchObject({ enabled: true });
  });

  it("runs a user's API calls as that user, whatever user_id the body claims", async () => {
    const gil = await createUser('gil');
    const thread = await api('POST', '/api/threads', gil.key, {});
    const run = await api('POST', `/api/threads/${thread.body?.thread_id}/runs/wait`, gil.key, {
      assistant_id: 'lead_agent',
      input: { messages: [{ role: 'human', content: 'save a note' }] },
      context: { user_id: 'someone-else' },
    });
    expect(run.status).toBe(200);
    expect(existsSync(join(dataDir, 'users', gil.id, 'threads', thread.body?.thread_id))).toBe(true);
    expect(existsSync(join(dataDir, 'users', 'someone-else'))).toBe(false);
  });

  it("keeps a user's threads their own: others get 404, exactly as for a thread that does not exist", async () => {
    const [hal, ivy] = await Promise.all([createUser('hal'), createUser('ivy')]);
    const thread = (await api('POST', '/api/threads', hal.key, {})).body?.thread_id as string;
    const ask = { assistant_id: 'lead_agent', input: { messages: [{ role: 'human', content: 'hi' }] } };
    expect((await api('GET', `/api/threads/${thread}`, hal.key)).status).toBe(200);
    expect((await api('GET', `/api/threads/${thread}`, ivy.key)).status).toBe(404);
    expect((await api('POST', `/api/threads/${thread}/runs/wait`, ivy.key, ask)).status).toBe(404);
    expect((await api('GET', `/api/threads/${thread}/goal`, ivy.key)).status).toBe(404);
    expect((await api('PUT', `/api/threads/${thread}/goal`, ivy.key, { objective: 'take over' })).status).toBe(404);
    expect((await api('DELETE', `/api/threads/${thread}/goal`, ivy.key)).status).toBe(404);
    expect((await api('POST', `/api/threads/${thread}/runs`, ivy.key, ask)).status).toBe(404);
    expect((await api('POST', `/api/threads/${thread}/runs/stream`, ivy.key, ask)).status).toBe(404);
    expect((await api('GET', `/api/threads/${thread}/runs/${randomUUID()}`, ivy.key)).status).toBe(404);
    expect((await api('POST', `/api/threads/${thread}/runs/${randomUUID()}/cancel`, ivy.key)).status).toBe(404);
    // Asking to create a thread with someone else's id neither hands it over nor tells it exists.
    expect((await api('POST', '/api/threads', ivy.key, { thread_id: thread, if_exists: 'do_nothing' })).status).toBe(404);
    expect((await api('POST', '/api/threads', ivy.key, { thread_id: thread, if_exists: 'raise' })).status).toBe(404);
    expect((await api('POST', '/api/threads', hal.key, { thread_id: thread, if_exists: 'raise' })).status).toBe(409);
    expect((await api('POST', `/api/threads/${thread}/runs/wait`, hal.key, ask)).status).toBe(200);
    expect((await api('GET', `/api/threads/${thread}`, ADMIN_TOKEN)).status).toBe(200);
  });
});
