import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { slackChannel } from '../../../channels/slack/index.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeSlack } from '../../fakes/slack/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { serveWebhookRoutes } from '../../helpers/webhook-server.js';

/**
 * HTTP Events mode: FakeSlack POSTs signed events to the adapter's route, mounted as core mounts
 * it (`/api/webhooks/slack` through the webhooks plugin) on a listening Fastify.
 */

const ALICE = 'U0ALICE1';
const DM = `D${ALICE}`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startHttpSlack(options: { isStarted?: boolean } = {}) {
  const fake = new FakeSlack();
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const config = slackChannel.configSchema.parse({ enabled: true, bot_token: fake.botToken, signing_secret: fake.signingSecret, api_url: fake.apiUrl });
  const adapter = await slackChannel.create(config, testChannelDeps({ intake, commands: [], logger: silentLogger() }));
  cleanups.push(() => adapter.stop());
  if (!adapter.routes) throw new Error('HTTP mode must have routes');
  const server = await serveWebhookRoutes('slack', adapter.routes);
  cleanups.push(server.close);
  fake.eventsUrl = server.url;
  if (options.isStarted !== false) await adapter.start();
  return { fake, intake, adapter };
}

function messagePayload(fake: FakeSlack, eventId: string, ts: string): Record<string, unknown> {
  return {
    team_id: fake.teamId,
    api_app_id: 'A0FAKE',
    type: 'event_callback',
    event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    event: { type: 'message', channel: DM, channel_type: 'im', user: ALICE, text: 'signed hello', ts, team: fake.teamId },
  };
}

const CHUNK = Buffer.alloc(64 * 1024, 0x20);

/** Announces 900 KB, writes one 64 KB chunk and waits for the answer without writing more. */
function postPartially(url: URL, headers: Record<string, string>): Promise<{ status: number; connection: string | undefined; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': String(900 * 1024) } },
      (res) => {
        res.resume();
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, sentBytes });
          req.destroy();
        });
      },
    );
    req.on('error', reject);
    req.write(CHUNK, () => {
      sentBytes += CHUNK.length;
    });
  });
}

describe('Slack HTTP events', () => {
  it('takes a signed event: 200 at once, then the intake gets it with a placeholder', async () => {
    const { fake, intake } = await startHttpSlack();
    // The intake holds the reservation: the HTTP answer must not wait for it.
    let release: () => void = () => undefined;
    intake.gate = new Promise((resolve) => {
      release = resolve;
    });
    const sent = await fake.sendUserMessage({ channel: DM, channelType: 'im', user: ALICE, text: 'hello over http' });
    expect(fake.eventResponses.at(-1)).toMatchObject({ eventId: sent.eventId, status: 200 });
    expect(intake.committed).toEqual([]);
    release();
    await intake.waitUntil(() => intake.committed.length === 1);
    expect(intake.committed[0]).toMatchObject({ chatId: DM, messageId: sent.ts, text: 'hello over http', workspaceId: fake.teamId });
    expect(fake.botMessages(DM).map((m) => m.text)).toEqual(['Working on it...']);
  });

  it('answers url_verification with its challenge', async () => {
    const { fake } = await startHttpSlack();
    const answer = await fake.postEvent({ token: 'x', challenge: 'chal-123', type: 'url_verification' }, 0);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ challenge: 'chal-123' });
  });

  it('refuses unsigned, wrongly signed and stale (> 5 min) requests with 401, changing nothing', async () => {
    const { fake, intake } = await startHttpSlack();
    const now = Math.floor(Date.now() / 1000);
    const answers = [
      await fake.postEvent(messagePayload(fake, 'EvUNSIGNED', '1.000001'), 0, { signature: null }),
      await fake.postEvent(messagePayload(fake, 'EvBADSIG', '1.000002'), 0, { signature: 'v0=deadbeef' }),
      await fake.postEvent(messagePayload(fake, 'EvSTALE', '1.000003'), 0, { timestampSeconds: now - 6 * 60 }),
      await fake.postEvent(messagePayload(fake, 'EvFUTURE', '1.000004'), 0, { timestampSeconds: now + 6 * 60 }),
    ];
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401]);
    const stale = await fake.postEvent({ type: 'url_verification', challenge: 'c' }, 0, { timestampSeconds: now - 6 * 60 });
    expect(stale.status).toBe(401);
    expect(intake.reserved).toBe(0);
    expect(fake.calls.filter((c) => c.method === 'chat.postMessage')).toEqual([]);
  });

  it('answers an unsigned or stale post from its headers, before reading its body, and closes', async () => {
    const { fake, intake } = await startHttpSlack();
    const url = new URL(fake.eventsUrl as string);
    const stale = String(Math.floor(Date.now() / 1000) - 6 * 60);
    const refused: Record<string, string>[] = [{}, { 'x-slack-request-timestamp': stale, 'x-slack-signature': 'v0=00' }];
    for (const headers of refused) {
      const answer = await postPartially(url, headers);
      expect(answer.status).toBe(401);
      expect(answer.connection).toBe('close');
      // The client sent one 64 KB chunk of the 900 KB it announced, and waited: the answer came anyway.
      expect(answer.sentBytes).toBeLessThanOrEqual(CHUNK.length);
    }
    expect(intake.reserved).toBe(0);
  });

  it('answers a retried or replayed event 200 and hands it over only once', async () => {
    const { fake, intake } = await startHttpSlack();
    const sent = await fake.sendUserMessage({ channel: DM, channelType: 'im', user: ALICE, text: 'once' });
    await intake.waitUntil(() => intake.committed.length === 1);
    const payload = messagePayload(fake, sent.eventId, sent.ts);
    const retries = [await fake.postEvent(payload, 1), await fake.postEvent(payload, 2), await fake.postEvent(payload, 0)];
    expect(retries.map((r) => r.status)).toEqual([200, 200, 200]);
    const later = await fake.sendUserMessage({ channel: DM, channelType: 'im', user: ALICE, text: 'next' });
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === later.ts));
    expect(intake.committed.map((m) => m.messageId)).toEqual([sent.ts, later.ts]);
    expect(fake.botMessages(DM)).toHaveLength(2);
  });

  it('answers 503 while the channel is not running, so Slack retries later', async () => {
    const { fake } = await startHttpSlack({ isStarted: false });
    const sent = await fake.sendUserMessage({ channel: DM, channelType: 'im', user: ALICE, text: 'too early' });
    expect(fake.eventResponses.find((r) => r.eventId === sent.eventId)?.status).toBe(503);
  });
});
