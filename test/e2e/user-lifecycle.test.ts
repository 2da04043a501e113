import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { apiClient, type Json } from './api-client.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The operator disables, enables, re-keys and deletes accounts through the real server; what the
 * account's key and its bound Telegram chat then meet. Driven only as people do: HTTP with API
 * keys, and messages through the fake Telegram.
 */

const ADMIN_TOKEN = 'operator-token-for-user-lifecycle';
const DISABLED = { code: 'USER_DISABLED', message: 'This account is disabled. Ask the operator.' };
const UNBOUND = 'Connect this channel from DeerFlow Settings, complete the in-channel connect step, then send your message again.';
const CONNECTED = 'Telegram connected to DeerFlow.';
const INVALID = 'Telegram connection link is invalid or expired.';

let telegram: FakeTelegram;
let model: FakeOpenAI;
let server: ServerProcess;
let nextChat = 9600;

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

async function bindChat(chatId: number, key: string): Promise<void> {
  expect(await replyText(chatId, `/start ${await connectCode(key)}`)).toBe(CONNECTED);
}

beforeAll(async () => {
  telegram = new FakeTelegram();
  model = new FakeOpenAI({ apiKey: 'sk-e2e' });
  model.respond = (request) => ({ text: `Echo: ${lastUserText(request.messages)}` });
  await Promise.all([telegram.start(), model.start()]);
  const config = writeConfig(`server: { port: 0 }
auth: { admin_token: ${ADMIN_TOKEN} }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
memory: { enabled: false }
channel_connections:
  enabled: true
  telegram: { enabled: true, bot_username: test_bot }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`);
  server = await startServerProcess(['--config', config.path], { cwd: config.dir });
});
afterAll(async () => {
  await server?.stop();
  await Promise.all([telegram?.stop(), model?.stop()]);
});
beforeEach(() => {
  nextChat++;
});

describe('disable and enable', () => {
  it("refuses a disabled account's key on every keyed route with the operator's text, and lets it in again once enabled", async () => {
    const eve = await createUser('eve');
    expect((await api('GET', '/api/me', eve.key)).status).toBe(200);

    const disabled = await api('PATCH', `/api/users/${eve.id}`, ADMIN_TOKEN, { disabled: true });
    expect(disabled).toMatchObject({ status: 200, body: { user: { id: eve.id, name: 'eve', disabled: true, can_use_shell: false } } });
    for (const [method, path, body] of [
      ['GET', '/api/me', undefined],
      ['GET', '/api/channels/connections', undefined],
      ['POST', '/api/channels/telegram/connect', undefined],
      ['POST', '/api/threads', {}],
      ['GET', '/api/memory', undefined],
      ['GET', '/api/chat/web/conversations', undefined],
      ['POST', '/api/chat/web/conversations', {}],
      ['GET', '/api/no-such-route', undefined],
    ] as const) {
      expect({ path, ...(await api(method, path, eve.key, body)) }).toEqual({ path, status: 403, body: DISABLED });
    }
    const listed = await api('GET', '/api/users', ADMIN_TOKEN);
    expect(listed.body?.users.find((u: Json) => u.name === 'eve')).toMatchObject({ disabled: true });

    // Both fields at once; enabling restores everything the key could do.
    const enabled = await api('PATCH', `/api/users/${eve.id}`, ADMIN_TOKEN, { disabled: false, can_use_shell: true });
    expect(enabled.body?.user).toMatchObject({ disabled: false, can_use_shell: true });
    expect(await api('GET', '/api/me', eve.key)).toMatchObject({ status: 200, body: { user: { name: 'eve', disabled: false }, is_operator: false } });
    expect((await api('POST', '/api/threads', eve.key, {})).status).toBe(200);
    expect((await api('GET', '/api/chat/web/conversations', eve.key)).status).toBe(200);
  });

  it('answers a bad body with 400 and a message, and an unknown user with 404, changing nothing', async () => {
    const fay = await createUser('fay');
    for (const body of [{}, { disabled: 'yes' }, { disabled: true, admin: true }, { can_use_shell: null }]) {
      const answer = await api('PATCH', `/api/users/${fay.id}`, ADMIN_TOKEN, body);
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/^body/) });
    }
    expect((await api('GET', '/api/me', fay.key)).status).toBe(200);
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect((await api('PATCH', `/api/users/${unknown}`, ADMIN_TOKEN, { disabled: true })).status).toBe(404);
    expect((await api('PATCH', '/api/users/not-a-uuid', ADMIN_TOKEN, { disabled: true })).status).toBe(404);
    expect((await api('POST', `/api/users/${unknown}/rotate-key`, ADMIN_TOKEN)).status).toBe(404);
    expect((await api('DELETE', `/api/users/${unknown}`, ADMIN_TOKEN)).status).toBe(404);
  });

  it('tells a Telegram chat bound to a disabled account so, and the model is never asked; enabling lets it talk again', async () => {
    const gia = await createUser('gia');
    const chatId = nextChat;
    await bindChat(chatId, gia.key);
    expect(await replyText(chatId, 'hello', (t) => t.startsWith('Echo:'))).toBe('Echo: hello');

    await api('PATCH', `/api/users/${gia.id}`, ADMIN_TOKEN, { disabled: true });
    const asked = model.requests.length;
    expect(await replyText(chatId, 'still there?')).toBe(DISABLED.message);
    expect(await replyText(chatId, '/new')).toBe(DISABLED.message);
    expect(model.requests.length).toBe(asked);
    expect(model.requests.some((r) => JSON.stringify(r.messages).includes('still there?'))).toBe(false);
    // The binding stays: enabling is all it takes.
    await api('PATCH', `/api/users/${gia.id}`, ADMIN_TOKEN, { disabled: false });
    expect(await replyText(chatId, 'back again', (t) => t.startsWith('Echo:'))).toBe('Echo: back again');
    expect(JSON.stringify(server.logs)).not.toContain('still there?');
  });
});

describe('rotate key', () => {
  it('shows a new key once: the old key is refused at once, the new one works', async () => {
    const hal = await createUser('hal');
    const rotated = await api('POST', `/api/users/${hal.id}/rotate-key`, ADMIN_TOKEN);
    expect(rotated).toMatchObject({ status: 200, body: { user: { id: hal.id, name: 'hal', disabled: false }, api_key: expect.stringMatching(/^dfc_/) } });
    const newKey = rotated.body?.api_key as string;
    expect(newKey).not.toBe(hal.key);
    expect(await api('GET', '/api/me', hal.key)).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
    expect(await api('GET', '/api/me', newKey)).toMatchObject({ status: 200, body: { user: { id: hal.id } } });
    // The key is never listed again.
    expect(JSON.stringify((await api('GET', '/api/users', ADMIN_TOKEN)).body)).not.toContain(newKey);
    expect(JSON.stringify(server.logs)).not.toContain(newKey);
  });
});

describe('delete', () => {
  it("removes the account, its bindings and pending codes, records it in the connection audit, and leaves its chat unbound", async () => {
    const ida = await createUser('ida');
    const chatId = nextChat;
    await bindChat(chatId, ida.key);
    const pendingCode = await connectCode(ida.key);
    const thread = (await api('POST', '/api/threads', ida.key, {})).body?.thread_id as string;

    expect(await api('DELETE', `/api/users/${ida.id}`, ADMIN_TOKEN)).toEqual({ status: 204, body: undefined });
    expect((await api('DELETE', `/api/users/${ida.id}`, ADMIN_TOKEN)).status).toBe(404);
    expect((await api('PATCH', `/api/users/${ida.id}`, ADMIN_TOKEN, { disabled: true })).status).toBe(404);
    expect((await api('POST', `/api/users/${ida.id}/rotate-key`, ADMIN_TOKEN)).status).toBe(404);
    expect((await api('GET', '/api/users', ADMIN_TOKEN)).body?.users.map((u: Json) => u.name)).not.toContain('ida');
    expect((await api('GET', '/api/me', ida.key)).status).toBe(401);
    expect((await api('GET', `/api/threads/${thread}`, ida.key)).status).toBe(401);

    // The chat is unconnected again, as after a disconnect; the code that was pending binds nobody.
    expect(await replyText(chatId, 'anyone?')).toBe(UNBOUND);
    expect(await replyText(nextChat + 1000, `/start ${pendingCode}`)).toBe(INVALID);

    const trail = await api('GET', '/api/audit/connections?limit=200', ADMIN_TOKEN);
    const hers = trail.body?.events.filter((e: Json) => e.user_id === ida.id);
    expect(hers.map((e: Json) => e.event_type)).toEqual(['user_deleted', 'unbound', 'bound']);
    expect(hers[0]).toMatchObject({ provider: '', external_account_id: '', connection_id: null });
    expect(hers[1]).toMatchObject({ provider: 'telegram', external_account_id: String(chatId) });

    // Another account the operator creates later reaches none of it.
    const jon = await createUser('jon');
    expect((await api('GET', `/api/threads/${thread}`, jon.key)).status).toBe(404);
    expect((await api('GET', '/api/channels/connections', jon.key)).body?.connections).toEqual([]);
  });
});

describe("a user's key on the operator's account routes", () => {
  it("gets 403 on disable, rotate and delete, for another user's id and its own, and changes nothing", async () => {
    const kai = await createUser('kai');
    const lea = await createUser('lea');
    for (const id of [lea.id, kai.id, '00000000-0000-4000-8000-000000000000']) {
      for (const query of ['', `?user_id=${lea.id}`, '?as=operator']) {
        expect((await api('PATCH', `/api/users/${id}${query}`, kai.key, { disabled: true })).status).toBe(403);
        expect((await api('POST', `/api/users/${id}/rotate-key${query}`, kai.key)).status).toBe(403);
        expect((await api('DELETE', `/api/users/${id}${query}`, kai.key)).status).toBe(403);
      }
    }
    expect(await api('GET', '/api/me', lea.key)).toMatchObject({ status: 200, body: { user: { name: 'lea', disabled: false } } });
    expect(await api('GET', '/api/me', kai.key)).toMatchObject({ status: 200, body: { user: { name: 'kai', disabled: false } } });
    // Without a key: 401.
    expect((await api('DELETE', `/api/users/${lea.id}`, undefined)).status).toBe(401);
  });
});
