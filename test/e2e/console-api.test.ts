import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { apiClient, type Json } from './api-client.js';
import { chatTurn, createUser as createAccount, holdOrFailResponder, startConsoleServer } from './console-fixtures.js';
import { channelStarted, type ServerProcess } from './server-process.js';
import { webChat } from './web-chat-client.js';

/**
 * The API behind the console's operator pages (issue #18), through the real server: every
 * channel's conversations and their transcripts (the operator's all, a person's their own, never
 * another's), the runs list and cancelling a run the fake model holds, and a dead letter retried.
 */

const ADMIN_TOKEN = 'console-api-operator-token-0123456789';

let model: FakeOpenAI;
let telegram: FakeTelegram;
let server: ServerProcess | undefined;
const url = () => server?.url ?? '';
const api = apiClient(url);
let aliceKey: string;
let bobKey: string;
let alice: ReturnType<typeof webChat>;
let bob: ReturnType<typeof webChat>;
/** Threads made in beforeAll: alice's and bob's web chats, and an unbound Telegram chat. */
const threads = { alice: '', bob: '', telegram: '' };
let aliceConversation = '';

/** Model answers the test holds until it lets them go. */
const held: Array<() => void> = [];

async function createUser(name: string): Promise<string> {
  return (await createAccount(api, ADMIN_TOKEN, name)).key;
}

/** Writes `text` in a new web conversation and waits for the agent's final; resolves with the conversation id. */
async function chat(person: ReturnType<typeof webChat>, title: string, text: string): Promise<string> {
  return (await chatTurn(person, text, title)).conversation;
}

async function conversations(key: string, query = ''): Promise<Json[]> {
  const answer = await api('GET', `/api/conversations${query}`, key);
  expect(answer.status).toBe(200);
  return (answer.body?.conversations ?? []) as Json[];
}

/** Every conversation `key` may see, read page by page (`limit` each) to the end. */
async function everyPage(key: string, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let before: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(limit), ...(before === null ? {} : { before }) });
    const answer = await api('GET', `/api/conversations?${query}`, key);
    expect(answer.status).toBe(200);
    seen.push(...((answer.body?.conversations ?? []) as Json[]).map((c) => c.thread_id as string));
    before = answer.body?.next_before as string | null;
  } while (before !== null);
  return seen;
}

describe('the console API', () => {
  beforeAll(async () => {
    model = new FakeOpenAI({ apiKey: 'sk-console' });
    telegram = new FakeTelegram();
    model.respond = holdOrFailResponder(held);
    await Promise.all([model.start(), telegram.start()]);
    server = await startConsoleServer(ADMIN_TOKEN, model, 'sk-console', `memory: { enabled: false }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`);
    await server.waitForLog(channelStarted('telegram'));
    aliceKey = await createUser('alice');
    bobKey = await createUser('bob');
    alice = webChat(url, aliceKey);
    bob = webChat(url, bobKey);

    telegram.sendUserMessage({ chatId: 9601, chatType: 'private', text: 'telegram hello', from: { id: 9601, first_name: 'Tess' } });
    await telegram.waitFor(() => telegram.botMessages(9601).some((m) => m.text === 'Echo: telegram hello'), 60_000);
    aliceConversation = await chat(alice, 'Alice asks', 'alice question');
    await chat(bob, 'Bob asks', 'bob question');
    const all = await conversations(ADMIN_TOKEN);
    const threadOf = (predicate: (c: Json) => boolean) => all.find(predicate)?.thread_id as string;
    threads.alice = threadOf((c) => c.platform === 'web' && c.person === 'alice');
    threads.bob = threadOf((c) => c.platform === 'web' && c.person === 'bob');
    threads.telegram = threadOf((c) => c.platform === 'telegram');
    expect(Object.values(threads).every((id) => typeof id === 'string' && id !== '')).toBe(true);
  });

  afterAll(async () => {
    for (const release of held.splice(0)) release();
    await server?.stop();
    await Promise.all([model?.stop(), telegram?.stop()]);
  });

  describe('conversations', () => {
    it("never shows alice bob's conversations or transcripts, under any query parameter", async () => {
      const bobId = (((await api('GET', '/api/users', ADMIN_TOKEN)).body?.users ?? []) as Json[]).find((u) => u.name === 'bob')?.id as string;
      const operatorCursor = (await api('GET', '/api/conversations?limit=1', ADMIN_TOKEN)).body?.next_before as string;
      expect((await conversations(aliceKey)).map((c) => c.thread_id)).toEqual([threads.alice]);
      // Pages, cursors taken from the operator's list, and parameters that try to name someone else.
      for (const query of ['?limit=200', `?before=${encodeURIComponent(operatorCursor)}`, '?limit=1']) {
        expect((await conversations(aliceKey, query)).map((c) => c.thread_id).filter((id) => id !== threads.alice)).toEqual([]);
      }
      for (const query of [`?user_id=${bobId}`, `?owner_user_id=${bobId}`, '?all=true', `?thread_id=${threads.bob}`]) {
        const answer = await api('GET', `/api/conversations${query}`, aliceKey);
        expect(answer.status).toBe(400);
        expect(JSON.stringify(answer.body)).not.toContain(threads.bob);
      }
      expect(await everyPage(aliceKey, 1)).toEqual([threads.alice]);
      // Someone else's transcript answers exactly as one that does not exist.
      const missing = await api('GET', `/api/conversations/${randomUUID()}/transcript`, aliceKey);
      expect(missing.status).toBe(404);
      for (const thread of [threads.bob, threads.telegram]) {
        expect(await api('GET', `/api/conversations/${thread}/transcript`, aliceKey)).toEqual(missing);
        expect(await api('GET', `/api/conversations/${thread}/transcript?user_id=${bobId}`, aliceKey)).toMatchObject({ status: 400 });
      }
      expect((await conversations(bobKey)).map((c) => c.thread_id)).toEqual([threads.bob]);
      expect((await api('GET', `/api/conversations/${threads.alice}/transcript`, bobKey)).status).toBe(404);
    });

    it('shows the operator every channel’s conversations, newest activity first, page by page', async () => {
      const all = await conversations(ADMIN_TOKEN);
      expect(all.map((c) => c.thread_id)).toEqual([threads.bob, threads.alice, threads.telegram]);
      const times = all.map((c) => Date.parse(c.last_activity_at as string));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      expect(all.find((c) => c.thread_id === threads.alice)).toMatchObject({ platform: 'web', chat_id: aliceConversation, title: 'Alice asks', person: 'alice', runs: 1 });
      // An unbound chat's person is the platform's id of its sender.
      expect(all.find((c) => c.thread_id === threads.telegram)).toMatchObject({ platform: 'telegram', chat_id: '9601', person: '9601', user_name: null });
      expect(await everyPage(ADMIN_TOKEN, 1)).toEqual(all.map((c) => c.thread_id));
      expect(await everyPage(ADMIN_TOKEN, 2)).toEqual(all.map((c) => c.thread_id));
      for (const query of ['?before=yesterday', '?limit=0', '?limit=201']) {
        const answer = await api('GET', `/api/conversations${query}`, ADMIN_TOKEN);
        expect(answer.status).toBe(400);
        expect(answer.body?.message).toMatch(/^query\.(before|limit): /);
      }
    });

    it("shows a conversation's transcript as the person saw it, to its owner and the operator", async () => {
      const expected = { thread_id: threads.alice, messages: [{ role: 'user', text: 'alice question' }, { role: 'assistant', text: 'Echo: alice question' }] };
      expect(await api('GET', `/api/conversations/${threads.alice}/transcript`, aliceKey)).toEqual({ status: 200, body: expected });
      expect(await api('GET', `/api/conversations/${threads.alice}/transcript`, ADMIN_TOKEN)).toEqual({ status: 200, body: expected });
      expect((await api('GET', `/api/conversations/${threads.telegram}/transcript`, ADMIN_TOKEN)).body?.messages).toEqual([
        { role: 'user', text: 'telegram hello' },
        { role: 'assistant', text: 'Echo: telegram hello' },
      ]);
      expect((await api('GET', '/api/conversations/not-a-uuid/transcript', ADMIN_TOKEN)).status).toBe(400);
      expect((await api('GET', `/api/conversations/${randomUUID()}/transcript`, ADMIN_TOKEN)).status).toBe(404);
    });
  });

  describe('runs', () => {
    it('lists a run the model holds as running, to the operator only, and cancelling it ends it', async () => {
      const conversation = await alice.newConversation('held');
      expect((await alice.send(conversation, 'hold me please')).status).toBe(202);
      await expect.poll(() => held.length, { timeout: 60_000 }).toBe(1);
      const running = (await api('GET', '/api/runs?status=running', ADMIN_TOKEN)).body?.runs as Json[];
      expect(running).toHaveLength(1);
      const run = running[0] as Json;
      expect(run).toMatchObject({ status: 'running', platform: 'web', chat_id: conversation, ended_at: null, error_kind: null });
      expect((await api('GET', '/api/runs?status=running', aliceKey)).status).toBe(403);
      expect((await api('GET', '/api/runs?status=sleeping', ADMIN_TOKEN)).status).toBe(400);

      const cancelled = await api('POST', `/api/threads/${run.thread_id}/runs/${run.run_id}/cancel?wait=true`, ADMIN_TOKEN);
      expect(cancelled.status).toBe(204);
      expect((await api('GET', `/api/threads/${run.thread_id}/runs/${run.run_id}`, ADMIN_TOKEN)).body?.status).toBe('interrupted');
      expect((await api('GET', '/api/runs?status=running', ADMIN_TOKEN)).body?.runs).toEqual([]);
      const listed = (((await api('GET', '/api/runs?status=all', ADMIN_TOKEN)).body?.runs ?? []) as Json[]).find((r) => r.run_id === run.run_id);
      expect(listed).toMatchObject({ status: 'interrupted' });
      expect(listed?.ended_at).not.toBeNull();
      for (const release of held.splice(0)) release();
    });

    it('lists a failed run with the kind of its failure, never what was said', async () => {
      const conversation = await alice.newConversation('failing');
      expect((await alice.send(conversation, 'fail me now')).status).toBe(202);
      await expect.poll(async () => (((await api('GET', '/api/runs?status=failed', ADMIN_TOKEN)).body?.runs ?? []) as Json[]).length, { timeout: 60_000 }).toBe(1);
      const answer = await api('GET', '/api/runs?status=failed', ADMIN_TOKEN);
      expect(answer.body?.runs[0]).toMatchObject({ status: 'error', platform: 'web', chat_id: conversation });
      expect(answer.body?.runs[0].error_kind).toMatch(/^(model call failed|agent run failed)$/);
      expect(JSON.stringify(answer.body)).not.toContain('fail me');
      expect(JSON.stringify(answer.body)).not.toContain('upstream broke');
    });
  });

  describe('outbox', () => {
    it('shows a dead letter to the operator and sends it again by its id', async () => {
      const chatId = 9701;
      const blocked = { errorCode: 403, description: 'Forbidden: bot was blocked by the user' } as const;
      telegram.failNext('sendMessage', blocked, 1000);
      telegram.failNext('editMessageText', blocked, 1000);
      telegram.sendUserMessage({ chatId, chatType: 'private', text: 'while blocked', from: { id: chatId, first_name: 'Dee' } });
      await server?.waitForLog((entry) => entry.msg === 'reply refused by the platform; kept as a dead letter', 30_000);
      expect((await api('GET', '/api/outbox?state=dead', aliceKey)).status).toBe(403);
      const dead = await api('GET', '/api/outbox?state=dead', ADMIN_TOKEN);
      expect(dead.body).toMatchObject({ dead: 1, entries: [{ channel: 'telegram', chat_id: String(chatId) }] });
      telegram.clearFaults();

      expect((await api('POST', '/api/outbox/retry', ADMIN_TOKEN, { id: 'one' })).status).toBe(400);
      expect((await api('POST', '/api/outbox/retry', aliceKey, { id: dead.body?.entries[0].id })).status).toBe(403);
      expect(await api('POST', '/api/outbox/retry', ADMIN_TOKEN, { id: dead.body?.entries[0].id })).toEqual({ status: 200, body: { retried: 1 } });
      await telegram.waitFor(() => telegram.botMessages(chatId).some((m) => m.text === 'Echo: while blocked'), 60_000);
      await expect.poll(async () => (await api('GET', '/api/outbox?state=dead', ADMIN_TOKEN)).body?.dead).toBe(0);
    });
  });
});
