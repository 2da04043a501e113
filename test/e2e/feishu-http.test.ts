import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { platforms } from '../../channels/index.js';
import { FakeFeishu, type FeishuMessageView } from '../fakes/feishu/index.js';
import { echoResponder, FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { channelFailedToStart, channelStarted, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The whole server as a Feishu operator meets it in HTTP callback mode: `src/main.ts` with a
 * config file, Feishu POSTing encrypted, signed event callbacks to `/api/webhooks/feishu`, the
 * real open API calls going to FakeFeishu, the real ChatOpenAI against a fake model. And what an
 * operator sees when the app secret is wrong.
 */

const isRegistered = platforms.some((platform) => platform.name === 'feishu');
const ENCRYPT_KEY = 'e2e-encrypt-key-5f1c9a';
const RUNNING = 'Thinking…';
let nextUser = 1;

function freshUser(): { openId: string; chatId: string } {
  const openId = `ou_http${String(nextUser++).padStart(25, '0')}`;
  return { openId, chatId: `oc_p2p_${openId}` };
}

function configYaml(feishu: FakeFeishu, model: FakeOpenAI, appSecret: string, mode: 'http' | 'ws' = 'http'): string {
  return `server: { port: 0 }
log: { level: debug }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  feishu:
    enabled: true
    mode: ${mode}
    app_id: "${feishu.appId}"
    app_secret: "${appSecret}"
    domain: "${feishu.url}"
    encrypt_key: "${ENCRYPT_KEY}"
    verification_token: "${feishu.verificationToken}"
`;
}

/** What Feishu does: POST the callback to the configured request URL. */
async function deliver(server: ServerProcess, callback: { body: string; headers: Record<string, string> }): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}/api/webhooks/feishu`, { method: 'POST', body: callback.body, headers: callback.headers });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, body };
}

describe.skipIf(!isRegistered)('Feishu HTTP event callbacks through the real server', () => {
  let feishu: FakeFeishu;
  let model: FakeOpenAI;
  let server: ServerProcess;

  /** Model requests whose last user message is `text`. */
  const modelRequestsFor = (text: string) => model.requests.filter((r) => lastUserText(r.messages) === text);
  /** Resolves once the server has logged `msg` at least `count` times. */
  const logCount = (msg: string, count: number) => server.waitForLog(() => server.logs.filter((e) => e.msg === msg).length >= count);
  const reactionsOn = (messageId: string) => feishu.reactions.filter((r) => r.messageId === messageId).map((r) => r.emoji);
  /** The bot's card answering `messageId`, once it shows `text`. */
  const finalIn = (chatId: string, messageId: string, text: string): Promise<FeishuMessageView> =>
    feishu.waitFor(() => feishu.botMessages(chatId).find((m) => m.replyTo === messageId && m.text === text), 15_000);

  beforeAll(async () => {
    feishu = new FakeFeishu();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([feishu.start(), model.start()]);
    server = await startServerProcess(['--config', writeConfig(configYaml(feishu, model, feishu.appSecret)).path]);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([feishu?.stop(), model?.stop()]);
  });
  afterEach(() => {
    model.respond = echoResponder;
    expect(feishu.rateLimitViolations).toEqual([]);
    expect(feishu.cardRateViolations).toEqual([]);
    expect(feishu.appRateViolations).toEqual([]);
  });

  it('reports the channel running, with no long connection opened', async () => {
    await server.waitForLog(channelStarted('feishu'));
    const health = (await (await fetch(`${server.url}/health`)).json()) as { ok: boolean; channels: Record<string, unknown> };
    expect(health.ok).toBe(true);
    expect(health.channels.feishu).toEqual({ running: true });
    expect(feishu.connectionCount()).toBe(0);
  });

  it('answers the encrypted URL verification challenge, as Feishu requires when the request URL is saved', async () => {
    const answer = await deliver(server, FakeFeishu.signedCallback({ type: 'url_verification', challenge: 'chal-e2e-1', token: feishu.verificationToken }, ENCRYPT_KEY));
    expect(answer).toEqual({ status: 200, body: { challenge: 'chal-e2e-1' } });
    // Feishu may send the challenge without signature headers; the encryption alone vouches for it.
    const unsigned = FakeFeishu.signedCallback({ type: 'url_verification', challenge: 'chal-e2e-2', token: feishu.verificationToken }, ENCRYPT_KEY);
    expect(await deliver(server, { body: unsigned.body, headers: { 'content-type': 'application/json' } })).toEqual({ status: 200, body: { challenge: 'chal-e2e-2' } });
  });

  it('acknowledges a signed message callback before the model answers, then answers in one card: OK, running card, final, DONE', async () => {
    const { openId, chatId } = freshUser();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    model.respond = async (request) => {
      await held;
      return { chunks: ['Hello ', 'over ', 'HTTP, ', `you said: ${lastUserText(request.messages)}`], chunkDelayMs: 50 };
    };
    const { event, messageId } = feishu.buildUserEvent({ chatId, chatType: 'p2p', openId, text: 'hello over http' });

    // Feishu needs its answer within 3 s; the server answers while the model is still thinking.
    const answer = await deliver(server, FakeFeishu.signedCallback(event, ENCRYPT_KEY));
    expect(answer.status).toBe(200);
    expect(feishu.botMessages(chatId).some((m) => m.text.includes('you said'))).toBe(false);
    expect(reactionsOn(messageId)).not.toContain('DONE');

    // The person sees the OK reaction and the running card while the model works.
    await feishu.waitFor(() => reactionsOn(messageId).includes('OK') && feishu.botMessages(chatId).find((m) => m.replyTo === messageId && m.text === RUNNING));
    await model.waitForRequests(1, 15_000);
    release();

    const final = await finalIn(chatId, messageId, 'Hello over HTTP, you said: hello over http');
    expect(final.msgType).toBe('interactive');
    expect(final.history[0]).toBe(RUNNING);
    expect(feishu.botMessages(chatId)).toHaveLength(1);
    await feishu.waitFor(() => reactionsOn(messageId).length === 2);
    expect(reactionsOn(messageId)).toEqual(['OK', 'DONE']);
    expect(modelRequestsFor('hello over http')).toHaveLength(1);
  });

  it('runs a callback delivered twice with the same event_id once, with one answer', async () => {
    const { openId, chatId } = freshUser();
    const { event, messageId } = feishu.buildUserEvent({ chatId, chatType: 'p2p', openId, text: 'only once please' });
    // Feishu retries a delivery it thinks failed: the same event, signed anew.
    const [first, second] = await Promise.all([
      deliver(server, FakeFeishu.signedCallback(event, ENCRYPT_KEY)),
      deliver(server, FakeFeishu.signedCallback(event, ENCRYPT_KEY)),
    ]);
    expect([first.status, second.status]).toEqual([200, 200]);
    await finalIn(chatId, messageId, 'Echo: only once please');
    await feishu.waitFor(() => reactionsOn(messageId).includes('DONE'));
    // The server says it recognised the redelivery (info log), so nothing of it is still to come.
    await logCount('inbound message delivered again; already taken', 1);
    // And a third delivery after the answer is shown changes nothing either.
    expect((await deliver(server, FakeFeishu.signedCallback(event, ENCRYPT_KEY))).status).toBe(200);
    await logCount('inbound message delivered again; already taken', 2);

    expect(modelRequestsFor('only once please')).toHaveLength(1);
    expect(feishu.botMessages(chatId)).toHaveLength(1);
    expect(reactionsOn(messageId)).toEqual(['OK', 'DONE']);
  });

  const forgeries: [string, (event: Record<string, unknown>) => { body: string; headers: Record<string, string> }, string][] = [
    ['a bad signature', (event) => FakeFeishu.signedCallback(event, ENCRYPT_KEY, { badSignature: true }), 'bad signature'],
    [
      'a tampered body',
      (event) => {
        const signed = FakeFeishu.signedCallback(event, ENCRYPT_KEY);
        // One character of the ciphertext changed in transit; headers as Feishu signed them.
        return { ...signed, body: signed.body.replace(/"encrypt":"(.)/, (_, c: string) => `"encrypt":"${c === 'A' ? 'B' : 'A'}`) };
      },
      'bad signature',
    ],
    ['a stale timestamp (6 minutes old)', (event) => FakeFeishu.signedCallback(event, ENCRYPT_KEY, { timestampSeconds: Math.floor(Date.now() / 1000) - 6 * 60 }), 'stale timestamp'],
    ['a timestamp 6 minutes ahead', (event) => FakeFeishu.signedCallback(event, ENCRYPT_KEY, { timestampSeconds: Math.floor(Date.now() / 1000) + 6 * 60 }), 'stale timestamp'],
    ['the wrong encrypt key', (event) => FakeFeishu.signedCallback(event, 'not-the-encrypt-key'), 'bad signature'],
    [
      'the wrong verification token',
      (event) => FakeFeishu.signedCallback({ ...event, header: { ...(event.header as object), token: 'forged-token' } }, ENCRYPT_KEY),
      'bad token',
    ],
    ['no signature headers', (event) => ({ body: FakeFeishu.signedCallback(event, ENCRYPT_KEY).body, headers: { 'content-type': 'application/json' } }), 'missing headers'],
  ];

  for (const [name, forge, reason] of forgeries) {
    it(`refuses a callback with ${name}: 401, and nothing runs`, async () => {
      const { openId, chatId } = freshUser();
      const text = `forged ${chatId}`;
      const { event, messageId } = feishu.buildUserEvent({ chatId, chatType: 'p2p', openId, text });
      const refusedBefore = server.logs.filter((e) => e.msg === 'Feishu callback refused').length;
      const answer = await deliver(server, forge(event));
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ code: 'UNAUTHORIZED', message: 'invalid Feishu callback' });
      await logCount('Feishu callback refused', refusedBefore + 1);
      expect(server.logs.filter((e) => e.msg === 'Feishu callback refused').at(-1)?.reason).toBe(reason);

      // The same person's genuine message afterwards is answered, and only it.
      const genuine = feishu.buildUserEvent({ chatId, chatType: 'p2p', openId, text: 'the real one' });
      expect((await deliver(server, FakeFeishu.signedCallback(genuine.event, ENCRYPT_KEY))).status).toBe(200);
      await finalIn(chatId, genuine.messageId, 'Echo: the real one');
      await feishu.waitFor(() => reactionsOn(genuine.messageId).includes('DONE'));
      expect(modelRequestsFor(text)).toEqual([]);
      expect(model.requests.some((r) => JSON.stringify(r.messages).includes(text))).toBe(false);
      expect(reactionsOn(messageId)).toEqual([]);
      expect(feishu.botMessages(chatId).map((m) => m.replyTo)).toEqual([genuine.messageId]);
    });
  }

  it('refuses a URL verification challenge signed with the wrong key, and does not echo the challenge', async () => {
    const answer = await deliver(server, FakeFeishu.signedCallback({ type: 'url_verification', challenge: 'chal-forged', token: feishu.verificationToken }, 'not-the-encrypt-key'));
    expect(answer.status).toBe(401);
    expect(JSON.stringify(answer.body)).not.toContain('chal-forged');
  });
});

for (const mode of ['http', 'ws'] as const) {
  describe.skipIf(!isRegistered)(`Feishu (${mode} mode) with a wrong app secret`, () => {
    const WRONG_SECRET = `wrong-app-secret-e2e-${mode}-7d3b0c41`;
    let feishu: FakeFeishu;
    let model: FakeOpenAI;
    let server: ServerProcess;

    beforeAll(async () => {
      feishu = new FakeFeishu();
      model = new FakeOpenAI({ apiKey: 'sk-e2e' });
      await Promise.all([feishu.start(), model.start()]);
      server = await startServerProcess(['--config', writeConfig(configYaml(feishu, model, WRONG_SECRET, mode)).path]);
    });
    afterAll(async () => {
      await server?.stop();
      await Promise.all([feishu?.stop(), model?.stop()]);
    });

    it('still starts and serves, and reports Feishu not running with a reason that names no secret', async () => {
      // Logged for the operator, with the same words as /health (the start may end after 'server listening').
      const logged = await server.waitForLog(channelFailedToStart('feishu'));
      expect(JSON.stringify(logged)).toContain('Feishu refused the app credentials (code 10014)');
      // Feishu was asked for a tenant token with the configured credentials and refused them.
      expect(feishu.calls.filter((c) => c.operation === 'token').map((c) => c.code)).toContain(10014);
      const response = await fetch(`${server.url}/health`);
      expect(response.status).toBe(200);
      const health = (await response.json()) as { ok: boolean; channels: Record<string, { running: boolean; reason?: string }> };
      expect(health.ok).toBe(true);
      expect(health.channels.feishu).toEqual({ running: false, reason: 'CHANNEL_UNAUTHORIZED: Feishu refused the app credentials (code 10014)' });
      // No long connection was asked for or opened.
      expect(feishu.calls.some((c) => c.path === '/callback/ws/endpoint')).toBe(false);
      expect(feishu.connectionCount()).toBe(0);
    });

    if (mode === 'http') {
      it('answers callbacks 503 so Feishu retries later, and runs nothing', async () => {
        const { openId, chatId } = freshUser();
        const { event, messageId } = feishu.buildUserEvent({ chatId, chatType: 'p2p', openId, text: 'anyone there?' });
        const answer = await deliver(server, FakeFeishu.signedCallback(event, ENCRYPT_KEY));
        expect(answer.status).toBe(503);
        expect(model.requests).toEqual([]);
        expect(feishu.botMessages(chatId)).toEqual([]);
        expect(feishu.reactions.filter((r) => r.messageId === messageId)).toEqual([]);
      });
    }

    it('never writes the app secret or the encrypt key to its logs, even at debug level', async () => {
      await server.stop();
      expect(server.logs.some((entry) => entry.msg === 'channel failed to start')).toBe(true);
      const output = JSON.stringify(server.logs) + server.stderr();
      expect(output).not.toContain(WRONG_SECRET);
      expect(output).not.toContain(ENCRYPT_KEY);
    });
  });
}
