import { afterEach, describe, expect, it } from 'vitest';
import { feishuChannel } from '../../../channels/feishu/index.js';
import { INGRESS_TEXTS } from '../../../src/channel/ingress/pipeline.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeFeishu } from '../../fakes/feishu/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { serveWebhookRoutes } from '../../helpers/webhook-server.js';

/**
 * HTTP callback mode: encrypted, signed events POSTed to the adapter's route, mounted as core
 * mounts it (`/api/webhooks/feishu`) on a listening Fastify. Every refusal runs nothing.
 */

const ALICE = 'ou_alice00000000000000000000000001';
const P2P = 'oc_p2p_alice';
const ENCRYPT_KEY = 'fake-encrypt-key';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An intake that says whether it has room, as the bus does, and is full while `isFull`. */
class RoomTellingIntake extends RecordingIntake {
  asked = 0;

  async hasRoom(): Promise<boolean> {
    this.asked += 1;
    return !this.isFull;
  }
}

async function startHttpFeishu(intake: RecordingIntake = new RecordingIntake()) {
  const fake = new FakeFeishu();
  await fake.start();
  cleanups.push(() => fake.stop());
  const config = feishuChannel.configSchema.parse({
    enabled: true,
    app_id: fake.appId,
    app_secret: fake.appSecret,
    domain: fake.url,
    mode: 'http',
    encrypt_key: ENCRYPT_KEY,
    verification_token: fake.verificationToken,
  });
  const adapter = await feishuChannel.create(config, testChannelDeps({ intake, commands: [], logger: silentLogger() }));
  cleanups.push(() => adapter.stop());
  if (!adapter.routes) throw new Error('HTTP mode must have routes');
  const server = await serveWebhookRoutes('feishu', adapter.routes);
  cleanups.push(server.close);
  await adapter.start();
  const post = (callback: { body: string; headers: Record<string, string> }) => fetch(server.url, { method: 'POST', body: callback.body, headers: callback.headers });
  return { fake, intake, adapter, post };
}

describe('feishu HTTP callbacks', () => {
  it('runs a signed, encrypted event once, even when it is delivered again', async () => {
    const { fake, intake, post } = await startHttpFeishu();
    const { event, messageId } = fake.buildUserEvent({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: 'over http' });
    expect((await post(FakeFeishu.signedCallback(event, ENCRYPT_KEY))).status).toBe(200);
    await intake.waitUntil(() => intake.committed.length === 1);
    expect((await post(FakeFeishu.signedCallback(event, ENCRYPT_KEY))).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(intake.committed.map((m) => [m.messageId, m.text])).toEqual([[messageId, 'over http']]);
  });

  it('refuses a message the intake has no room for while Feishu will push it again, and runs its retry', async () => {
    const intake = new RoomTellingIntake();
    intake.isFull = true;
    const { fake, post } = await startHttpFeishu(intake);
    const { event, messageId } = fake.buildUserEvent({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: 'while busy' });
    const refused = await post(FakeFeishu.signedCallback(event, ENCRYPT_KEY));
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: 'INBOUND_QUEUE_FULL' });
    expect(intake.reserved).toBe(0);
    // Feishu's retry a few seconds later finds room.
    intake.isFull = false;
    expect((await post(FakeFeishu.signedCallback(event, ENCRYPT_KEY))).status).toBe(200);
    await intake.waitUntil(() => intake.committed.length === 1);
    expect(intake.committed.map((m) => m.messageId)).toEqual([messageId]);
    expect(fake.botMessages(P2P).map((m) => m.text)).not.toContain(INGRESS_TEXTS.busy);
  });

  it('tells the person to send it again when a late retry still finds no room', async () => {
    const intake = new RoomTellingIntake();
    intake.isFull = true;
    const { fake, post } = await startHttpFeishu(intake);
    const { event, messageId } = fake.buildUserEvent({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: 'still busy' });
    // Feishu's retry five minutes after it sent the event: the retries left are an hour apart.
    const late = { ...event, header: { ...(event.header as object), create_time: String(Date.now() - 5 * 60_000) } };
    expect((await post(FakeFeishu.signedCallback(late, ENCRYPT_KEY))).status).toBe(200);
    const told = await fake.waitFor(() => fake.botMessages(P2P).find((m) => m.text === INGRESS_TEXTS.busy));
    expect(told.replyTo).toBe(messageId);
    expect(intake.refused).toBe(1);
  });

  it('answers the URL verification challenge', async () => {
    const { fake, post } = await startHttpFeishu();
    const response = await post(FakeFeishu.signedCallback({ type: 'url_verification', challenge: 'ch-1', token: fake.verificationToken }, ENCRYPT_KEY));
    expect(await response.json()).toEqual({ challenge: 'ch-1' });
  });

  for (const [name, make] of [
    ['a bad signature', (event: Record<string, unknown>) => FakeFeishu.signedCallback(event, ENCRYPT_KEY, { badSignature: true })],
    ['a stale timestamp', (event: Record<string, unknown>) => FakeFeishu.signedCallback(event, ENCRYPT_KEY, { timestampSeconds: Math.floor(Date.now() / 1000) - 6 * 60 })],
    ['the wrong encrypt key', (event: Record<string, unknown>) => FakeFeishu.signedCallback(event, 'another-key')],
    [
      'the wrong verification token',
      (event: Record<string, unknown>) => FakeFeishu.signedCallback({ ...event, header: { ...(event.header as object), token: 'forged' } }, ENCRYPT_KEY),
    ],
    ['no signature headers', (event: Record<string, unknown>) => ({ body: FakeFeishu.signedCallback(event, ENCRYPT_KEY).body, headers: { 'content-type': 'application/json' } })],
  ] as const) {
    it(`refuses ${name} with 401 and runs nothing`, async () => {
      const { fake, intake, post } = await startHttpFeishu();
      const { event } = fake.buildUserEvent({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: 'forged' });
      const response = await post(make(event));
      expect(response.status).toBe(401);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(intake.reserved).toBe(0);
      expect(fake.calls.filter((c) => c.operation === 'send' || c.operation === 'reaction')).toEqual([]);
    });
  }
});
