import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeChatRequest, FakeOpenAI, type FakeReply, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { apiClient } from './api-client.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Accounts mode: `bash` only for people the operator granted it, through the API and through a
 * bound chat account alike (test/e2e/sandbox-boundary.test.ts shows what a granted shell can see). Whoever asks, the model is
 * scripted to run `echo` when it is offered `bash`, so the reply says what the caller got.
 */

const ADMIN_TOKEN = 'operator-token-for-shell-grants';
const CONNECTED = 'Telegram connected to DeerFlow.';
const ASK_SHELL = 'run the shell please';
const NO_SHELL = 'no shell offered';

let telegram: FakeTelegram;
let model: FakeOpenAI;
let server: ServerProcess;
let nextChat = 5100;

function toolNames(request: FakeChatRequest): string[] {
  return (request.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
}

/** Runs `echo` through bash when offered; answers with its output, or says no shell was offered. */
function scriptedModel(request: FakeChatRequest): FakeReply {
  const system = request.messages.find((m) => m.role === 'system')?.content;
  if (typeof system === 'string' && system.startsWith('You maintain the long-term memory')) {
    return { text: JSON.stringify({ user: {}, newFacts: [], factsToRemove: [] }) };
  }
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `shell said: ${typeof last.content === 'string' ? last.content.trim() : ''}` };
  if (lastUserText(request.messages) !== ASK_SHELL) return { text: 'ok' };
  if (!toolNames(request).includes('bash')) return { text: NO_SHELL };
  return { toolCalls: [{ name: 'bash', args: { description: 'probe', command: 'echo granted-$((40+2))' } }] };
}

const api = apiClient(() => server.url);

async function createUser(name: string): Promise<{ id: string; key: string }> {
  const created = await api('POST', '/api/users', ADMIN_TOKEN, { name });
  expect(created.status).toBe(201);
  return { id: created.body?.user.id, key: created.body?.api_key };
}

/** One waited run on a fresh thread, as `key`; resolves with the agent's final text. */
async function askShell(key: string, context: Record<string, unknown> = {}): Promise<string> {
  const thread = await api('POST', '/api/threads', key, {});
  const run = await api('POST', `/api/threads/${thread.body?.thread_id}/runs/wait`, key, {
    assistant_id: 'lead_agent',
    input: { messages: [{ role: 'human', content: ASK_SHELL }] },
    context,
  });
  expect(run.status).toBe(200);
  return String(run.body?.messages.at(-1)?.content);
}

async function chatReply(chatId: number, text: string, final: (text: string) => boolean = (t) => t !== 'Working on it...'): Promise<string> {
  const sent = telegram.sendUserMessage({ chatId, chatType: 'private', text });
  const reply = await telegram.waitFor(() => {
    const found = telegram.botMessages(chatId).find((m) => m.replyTo === sent.message_id);
    return found && final(found.text) ? found : undefined;
  }, 15_000);
  return reply.text;
}

const isAnswer = (text: string) => text === NO_SHELL || text.startsWith('shell said:');

beforeAll(async () => {
  telegram = new FakeTelegram();
  model = new FakeOpenAI({ apiKey: 'sk-e2e' });
  model.respond = scriptedModel;
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
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1, allowed_users: [] }
`);
  server = await startServerProcess(['--config', config.path], { cwd: config.dir });
});
afterAll(async () => {
  await server?.stop();
  await Promise.all([telegram?.stop(), model?.stop()]);
});

describe('shell grants in accounts mode, through the real server', () => {
  it('gives an API user bash only once the operator grants it, and takes it back on revoke', async () => {
    const alice = await createUser('alice');
    expect(await askShell(alice.key)).toBe(NO_SHELL);
    // The body cannot grant itself the shell.
    expect(await askShell(alice.key, { trusted_sender: true })).toBe(NO_SHELL);

    const granted = await api('PATCH', `/api/users/${alice.id}`, ADMIN_TOKEN, { can_use_shell: true });
    expect(granted).toEqual({ status: 200, body: { user: expect.objectContaining({ id: alice.id, name: 'alice', can_use_shell: true }) } });
    expect(await askShell(alice.key)).toBe('shell said: granted-42');
    expect((await api('GET', '/api/users', ADMIN_TOKEN)).body?.users).toContainEqual(expect.objectContaining({ name: 'alice', can_use_shell: true }));

    await api('PATCH', `/api/users/${alice.id}`, ADMIN_TOKEN, { can_use_shell: false });
    expect(await askShell(alice.key)).toBe(NO_SHELL);
  });

  it('keeps the operator trusted: bash as today', async () => {
    expect(await askShell(ADMIN_TOKEN)).toBe('shell said: granted-42');
  });

  it('gives a bound chat account bash only when its owner is granted', async () => {
    const bob = await createUser('bob');
    const chatId = nextChat++;
    const offer = await api('POST', '/api/channels/telegram/connect', bob.key);
    expect(await chatReply(chatId, `/start ${offer.body?.code}`)).toBe(CONNECTED);
    expect(await chatReply(chatId, ASK_SHELL, isAnswer)).toBe(NO_SHELL);

    expect((await api('PATCH', `/api/users/${bob.id}`, ADMIN_TOKEN, { can_use_shell: true })).status).toBe(200);
    expect(await chatReply(chatId, ASK_SHELL, isAnswer)).toBe('shell said: granted-42');
  });

  it('lets only the operator change grants, with clear errors', async () => {
    const carol = await createUser('carol');
    expect((await api('PATCH', `/api/users/${carol.id}`, carol.key, { can_use_shell: true })).status).toBe(403);
    expect((await api('PATCH', `/api/users/${carol.id}`, undefined, { can_use_shell: true })).status).toBe(401);
    expect(await api('PATCH', '/api/users/00000000-0000-4000-8000-000000000000', ADMIN_TOKEN, { can_use_shell: true })).toEqual({
      status: 404,
      body: { code: 'NOT_FOUND', message: 'User not found' },
    });
    expect((await api('PATCH', '/api/users/not-a-uuid', ADMIN_TOKEN, { can_use_shell: true })).status).toBe(404);
    expect((await api('PATCH', `/api/users/${carol.id}`, ADMIN_TOKEN, { can_use_shell: 'yes' })).status).toBe(400);
    expect((await api('PATCH', `/api/users/${carol.id}`, ADMIN_TOKEN, { name: 'mallory' })).status).toBe(400);
    expect((await api('GET', '/api/me', carol.key)).body?.user).toMatchObject({ name: 'carol', can_use_shell: false });
  });
});
