import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WECHAT_TEXTS } from '../../channels/wechat/texts.js';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeWeChat } from '../fakes/wechat/index.js';
import { apiClient } from './api-client.js';
import { channelStarted, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The whole server as a WeChat user meets it: `src/main.ts` with a config file, the adapter's
 * iLink client against FakeWeChat, the real ChatOpenAI against a fake model. Assertions are
 * about what the person's chat shows and what /health says.
 */

const ALICE = 'alice-e2e@im.wechat';

function configYaml(wechat: FakeWeChat, model: FakeOpenAI): string {
  return `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  wechat: { enabled: true, bot_token: "${wechat.token}", base_url: "${wechat.baseUrl}", cdn_base_url: "${wechat.cdnBaseUrl}", polling_timeout: 1, polling_retry_delay: 0.2 }
`;
}

/** Starts the server in the config's folder, so its `.data` (the database) is the same on every start. */
async function boot(config: { path: string; dir: string }): Promise<ServerProcess> {
  const server = await startServerProcess(['--config', config.path], { cwd: config.dir });
  await server.waitForLog(channelStarted('wechat'), 15_000);
  return server;
}

describe('chatting in WeChat', () => {
  const wechat = new FakeWeChat({ longPollHoldMs: 1000 });
  const model = new FakeOpenAI({ apiKey: 'sk-e2e' });
  let config: { path: string; dir: string };
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    await Promise.all([wechat.start(), model.start()]);
    config = writeConfig(configYaml(wechat, model));
    server = await boot(config);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([wechat.stop(), model.stop()]);
  });

  it('answers with a standing acknowledgement, then the final in messages of at most 4000 characters, echoing the context token', async () => {
    const question = wechat.sendUserMessage({ userId: ALICE, text: 'hello from WeChat' });
    const echo = await wechat.waitFor(() => wechat.botMessages(ALICE).find((m) => m.text === 'Echo: hello from WeChat'), 20_000);
    expect(wechat.botMessages(ALICE).map((m) => [m.text, m.replyTo])).toEqual([
      [WECHAT_TEXTS.working, question.messageId],
      ['Echo: hello from WeChat', question.messageId],
    ]);
    expect(echo.replyTo).toBe(question.messageId);
    const long = Array.from({ length: 900 }, (_, i) => `line ${i}`).join('\n');
    model.enqueue({ text: long });
    const next = wechat.sendUserMessage({ userId: ALICE, text: 'a long one please' });
    const parts = await wechat.waitFor(() => {
      const answers = wechat.botMessages(ALICE).filter((m) => m.replyTo === next.messageId && m.text !== WECHAT_TEXTS.working);
      // Each part is its own message, cut after a newline: the newline is where one message ends.
      return answers.map((m) => m.text).join('\n') === long && answers;
    }, 20_000);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.filter((m) => m.text.length > 4000)).toEqual([]);
    expect(wechat.headerViolations).toEqual([]);
  });

  it('keeps its cursor and context tokens in the database: after a restart nothing is answered twice and a message sent meanwhile is answered', async () => {
    const before = wechat.sendUserMessage({ userId: ALICE, text: 'before the restart' });
    await wechat.waitFor(() => wechat.botMessages(ALICE).find((m) => m.text === 'Echo: before the restart'), 20_000);
    await server?.stop();
    const pollsBefore = wechat.calls.filter((c) => c.path === '/ilink/bot/getupdates').length;
    const meanwhile = wechat.sendUserMessage({ userId: ALICE, text: 'while you were away' });
    server = await boot(config);
    await wechat.waitFor(() => wechat.botMessages(ALICE).find((m) => m.text === 'Echo: while you were away'), 20_000);
    // The new process went on from the saved cursor, not from the start of the log.
    const firstPoll = wechat.calls.filter((c) => c.path === '/ilink/bot/getupdates')[pollsBefore];
    expect((firstPoll?.body as { get_updates_buf?: string } | undefined)?.get_updates_buf).toMatch(/\S/);
    // One more poll after the answer, so a batch read again would have been answered again by now.
    const polls = wechat.calls.filter((c) => c.path === '/ilink/bot/getupdates').length;
    await wechat.waitFor(() => wechat.calls.filter((c) => c.path === '/ilink/bot/getupdates').length > polls + 1, 10_000);
    const answersTo = (messageId: string) => wechat.botMessages(ALICE).filter((m) => m.replyTo === messageId).map((m) => m.text);
    expect(answersTo(before.messageId)).toEqual([WECHAT_TEXTS.working, 'Echo: before the restart']);
    expect(answersTo(meanwhile.messageId)).toEqual([WECHAT_TEXTS.working, 'Echo: while you were away']);
  });

  it('reports an expired session (errcode -14) in /health, without the token in any log', async () => {
    wechat.expireToken();
    await server?.waitForLog((entry) => entry.msg === 'WeChat session expired (errcode -14); polling stopped', 15_000);
    const health = (await (await fetch(`${server?.url}/health`)).json()) as { channels: Record<string, unknown> };
    expect(health.channels.wechat).toEqual({ running: false, reason: WECHAT_TEXTS.sessionExpired });
    expect(JSON.stringify(server?.logs)).not.toContain(wechat.token);
    expect(server?.stderr()).not.toContain(wechat.token);
  });
});

describe('binding a WeChat account with /connect through the real server', () => {
  const ADMIN_TOKEN = 'operator-token-for-wechat-e2e';
  const UNBOUND = 'Connect this channel from DeerFlow Settings, complete the in-channel connect step, then send your message again.';
  const wechat = new FakeWeChat({ longPollHoldMs: 1000 });
  const model = new FakeOpenAI({ apiKey: 'sk-e2e' });
  let server: ServerProcess | undefined;
  const api = apiClient(() => server?.url ?? '');

  beforeAll(async () => {
    await Promise.all([wechat.start(), model.start()]);
    const yaml = `${configYaml(wechat, model)}auth: { admin_token: ${ADMIN_TOKEN} }
channel_connections:
  enabled: true
  wechat: { enabled: true }
`;
    server = await boot(writeConfig(yaml));
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([wechat.stop(), model.stop()]);
  });

  /** The person writes `text`; resolves with the bot's answer to it other than the acknowledgement. */
  async function answerTo(userId: string, text: string): Promise<string> {
    const sent = wechat.sendUserMessage({ userId, text });
    const answer = await wechat.waitFor(() => wechat.botMessages(userId).find((m) => m.replyTo === sent.messageId && m.text !== WECHAT_TEXTS.working), 20_000);
    return answer.text;
  }

  it('tells an unbound person how to connect, binds them with a one-time code, then runs their chat as that user', async () => {
    const person = 'bea-e2e@im.wechat';
    const created = await api('POST', '/api/users', ADMIN_TOKEN, { name: 'bea' });
    expect(created.status).toBe(201);
    const key = created.body?.api_key as string;
    expect(await answerTo(person, 'hello?')).toBe(UNBOUND);
    const offer = await api('POST', '/api/channels/wechat/connect', key);
    expect(offer.body).toMatchObject({ provider: 'wechat', mode: 'binding_code' });
    expect(await answerTo(person, `/connect ${offer.body?.code}`)).toBe('WeChat connected to DeerFlow.');
    const { body } = await api('GET', '/api/channels/connections', key);
    expect(body?.connections).toEqual([expect.objectContaining({ provider: 'wechat', status: 'connected', external_account_id: person, workspace_id: person })]);
    expect(await answerTo(person, 'now?')).toBe('Echo: now?');
  });
});
