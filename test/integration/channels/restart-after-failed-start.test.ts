import { afterEach, describe, expect, it, vi } from 'vitest';
import { dingtalkChannel } from '../../../channels/dingtalk/index.js';
import { discordChannel } from '../../../channels/discord/index.js';
import { feishuChannel } from '../../../channels/feishu/index.js';
import { slackChannel } from '../../../channels/slack/index.js';
import { telegramChannel } from '../../../channels/telegram/index.js';
import type { ChannelAdapter, ChannelDefinition } from '../../../src/channel/types.js';
import { ChannelError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeDingTalk } from '../../fakes/dingtalk/index.js';
import { FakeDiscord } from '../../fakes/discord/index.js';
import { FakeFeishu } from '../../fakes/feishu/index.js';
import { FakeSlack } from '../../fakes/slack/index.js';
import { FakeTelegram } from '../../fakes/telegram/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/**
 * Core retries `start()` on the same adapter object after a transient failure
 * (`CHANNEL_UNAVAILABLE`). For each platform: the fake fails the identity call the adapter makes
 * at start-up, the platform recovers, and the second `start()` must give a normally working
 * channel: running, one connection, every message a person sends reaching the intake exactly
 * once and acknowledged as usual, and a clean `stop()`.
 */

const COMMANDS = [{ name: 'new', description: 'Start a new conversation' }];

/** One platform: its fake, the fault, and how a person writes and how the chat shows the acknowledgement. */
interface Platform {
  /** The fake is running; the adapter is made but not started. */
  adapter: ChannelAdapter;
  intake: RecordingIntake;
  /** Makes the platform fail start-up transiently; resolves with what the first `start()` rejected with. */
  failFirstStart(): Promise<unknown>;
  /** A person writes in a one-to-one chat; resolves with the message's id as core sees it (`InboundMessage.messageId`). */
  send(text: string): Promise<string>;
  /** Resolves once the chat shows the acknowledgement of that message (and the platform got its ack). */
  acknowledged(messageId: string): Promise<void>;
  /** Connections (sockets, gateway sessions) the adapter holds open at the platform; absent for long polling. */
  connections?(): number;
  /** What `status().reason` must say after the failed start, where the adapter words it itself. */
  reason?: RegExp;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The real adapter made by its definition, against a running fake; both closed after the test. */
async function make<Config>(
  definition: ChannelDefinition<Config>,
  fake: { start(): Promise<void>; stop(): Promise<void> },
  config: () => Record<string, unknown>,
): Promise<{ adapter: ChannelAdapter; intake: RecordingIntake }> {
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const adapter = await definition.create(definition.configSchema.parse({ enabled: true, ...config() }), testChannelDeps({ intake, commands: COMMANDS, logger: silentLogger() }));
  cleanups.push(() => adapter.stop());
  return { adapter, intake };
}

function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('start() resolved although the platform was failing');
    },
    (error: unknown) => error,
  );
}

/**
 * grammY retries getMe on a 5xx without end (with backoff) until the adapter's start-up timeout
 * (30 s) aborts it. Timers are fake while the first start runs; the loop moves them on while real
 * I/O goes on between steps, so every backoff and finally the timeout pass at once.
 */
async function withTimersRunAhead(promise: Promise<unknown>): Promise<unknown> {
  let isSettled = false;
  const outcome = promise.finally(() => {
    isSettled = true;
  });
  while (!isSettled) {
    await vi.advanceTimersToNextTimerAsync();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return outcome;
}

const PLATFORMS: { name: string; fault: string; setup(): Promise<Platform> }[] = [
  {
    name: 'telegram',
    fault: 'getMe answers 500 until the start-up timeout',
    setup: async () => {
      const fake = new FakeTelegram();
      const chatId = 777;
      const made = await make(telegramChannel, fake, () => ({ bot_token: fake.token, api_root: fake.apiRoot, polling_timeout_seconds: 1 }));
      return {
        ...made,
        failFirstStart: async () => {
          fake.failNext('getMe', { errorCode: 500 }, Number.POSITIVE_INFINITY);
          vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
          try {
            return await withTimersRunAhead(rejectionOf(made.adapter.start()));
          } finally {
            vi.useRealTimers();
            fake.clearFaults('getMe');
          }
        },
        reason: /Telegram did not answer getMe within 30 s/,
        send: async (text) => String(fake.sendUserMessage({ chatId, chatType: 'private', text }).message_id),
        acknowledged: async (messageId) => {
          await fake.waitFor(() => fake.botMessages(chatId).some((m) => String(m.replyTo) === messageId && m.text === 'Working on it...'));
        },
      };
    },
  },
  {
    name: 'slack',
    fault: 'auth.test answers HTTP 503 (each of the SDK’s tries)',
    setup: async () => {
      const fake = new FakeSlack();
      const channel = 'DU0ALICE1';
      const made = await make(slackChannel, fake, () => ({ bot_token: fake.botToken, app_token: fake.appToken, api_url: fake.apiUrl }));
      const envelopes = new Map<string, string>();
      return {
        ...made,
        failFirstStart: async () => {
          // The Web API client tries a 5xx once and retries it twice (RETRY_CONFIG.retries).
          fake.failNext('auth.test', { kind: 'http', status: 503 }, 3);
          return rejectionOf(made.adapter.start());
        },
        send: async (text) => {
          const sent = await fake.sendUserMessage({ channel, channelType: 'im', user: 'U0ALICE1', text });
          envelopes.set(sent.ts, sent.envelopeId);
          return sent.ts;
        },
        acknowledged: async (ts) => {
          await fake.waitFor(
            () =>
              fake.messages(channel).find((m) => m.ts === ts)?.reactions.includes('eyes') &&
              fake.botMessages(channel).some((m) => m.threadTs === ts && m.text === 'Working on it...') &&
              fake.acks.some((a) => a.envelopeId === envelopes.get(ts)),
          );
        },
        connections: () => fake.openSockets,
      };
    },
  },
  {
    name: 'discord',
    fault: 'GET /gateway/bot answers 503 (each of discord.js’s tries)',
    setup: async () => {
      const fake = new FakeDiscord();
      const made = await make(discordChannel, fake, () => ({ bot_token: fake.token, api_url: fake.apiRoot }));
      const author = { id: '700000000000000001', username: 'alice', global_name: 'Alice' };
      return {
        ...made,
        failFirstStart: async () => {
          // discord.js tries a 5xx once and retries it REST_RETRIES (3) times.
          fake.failNext('gateway', { status: 503, code: 0, message: 'Service Unavailable' }, 4);
          return rejectionOf(made.adapter.start());
        },
        send: async (content) => fake.sendUserMessage({ channelId: fake.channelIds.general, author, content }).id,
        acknowledged: async (messageId) => {
          await fake.waitFor(() => fake.reactions.some((r) => r.messageId === messageId && r.emoji === '👀'));
        },
        connections: () => fake.gateway.openConnections(),
      };
    },
  },
  {
    name: 'feishu',
    fault: 'the tenant token call answers HTTP 503 with an HTML page',
    setup: async () => {
      const fake = new FakeFeishu();
      const chatId = 'oc_p2p_alice';
      const made = await make(feishuChannel, fake, () => ({ app_id: fake.appId, app_secret: fake.appSecret, domain: fake.url }));
      return {
        ...made,
        failFirstStart: async () => {
          // An overloaded gateway answering in JSON says nothing about the credentials either.
          fake.failNext('token', { kind: 'http', status: 503, json: { code: 99991000, msg: 'system busy' } });
          return rejectionOf(made.adapter.start());
        },
        reason: /Feishu unavailable \(tenant_access_token: HTTP 503\)/,
        send: async (text) => fake.sendUserMessage({ chatId, chatType: 'p2p', openId: 'ou_alice00000000000000000000000001', text }).messageId,
        acknowledged: async (messageId) => {
          await fake.waitFor(
            () => fake.messages.some((m) => m.fromBot && m.replyTo === messageId) && fake.events.some((e) => e.messageId === messageId && e.acked),
          );
        },
        connections: () => fake.connectionCount(),
      };
    },
  },
  {
    name: 'dingtalk',
    fault: 'POST /v1.0/gateway/connections/open answers HTTP 503',
    setup: async () => {
      const fake = new FakeDingTalk();
      const made = await make(dingtalkChannel, fake, () => ({ client_id: fake.clientId, client_secret: fake.clientSecret, api_url: fake.apiUrl }));
      const userId = 'staffalice01';
      const frames = new Map<string, { chatId: string; streamMessageId: string }>();
      return {
        ...made,
        failFirstStart: async () => {
          fake.failNext('/v1.0/gateway/connections/open', { kind: 'http', status: 503 });
          return rejectionOf(made.adapter.start());
        },
        send: async (text) => {
          const sent = await fake.sendUserMessage({ chat: 'private', userId, text });
          frames.set(sent.msgId, sent);
          return sent.msgId;
        },
        acknowledged: async (msgId) => {
          const sent = frames.get(msgId);
          if (sent === undefined) throw new Error(`no message ${msgId} was sent`);
          // Without cards the acknowledgement is a standing "⏳" text answering the message.
          await fake.waitFor(() => fake.isAcked(sent.streamMessageId) && fake.botMessages(sent.chatId).some((m) => m.replyTo === msgId));
        },
        connections: () => fake.connectionCount(),
      };
    },
  },
];

describe.each(PLATFORMS)('$name: start() again after a transient start-up failure ($fault), or after a stop', ({ setup }) => {
  it('fails the first start with CHANNEL_UNAVAILABLE, then starts, takes messages once each, and stops', async () => {
    const platform = await setup();
    const { adapter, intake } = platform;

    const failure = await platform.failFirstStart();
    expect(failure).toBeInstanceOf(ChannelError);
    expect(failure).toMatchObject({ platform: adapter.name, code: 'CHANNEL_UNAVAILABLE' });
    // What /health shows: why it is not running.
    expect(adapter.status()).toEqual({ running: false, reason: expect.stringMatching(/\S/) });
    expect(adapter.status().reason).not.toBe('stopped');
    if (platform.reason) expect(adapter.status().reason).toMatch(platform.reason);

    await expect(adapter.start()).resolves.toBeUndefined();
    expect(adapter.status()).toEqual({ running: true });

    const first = await platform.send('hello after the outage');
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === first));
    await platform.acknowledged(first);
    // A second message is the barrier: anything delivered twice would have reached the intake before it.
    const second = await platform.send('and one more');
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === second));
    await platform.acknowledged(second);
    expect(intake.committed.map((m) => [m.messageId, m.text])).toEqual([
      [first, 'hello after the outage'],
      [second, 'and one more'],
    ]);
    if (platform.connections) expect(platform.connections()).toBe(1);

    await expect(adapter.stop()).resolves.toBeUndefined();
    expect(adapter.status().running).toBe(false);
  });

  it('starts again after a stop (a process that lost its ingress lease and got it back), taking messages once each', async () => {
    const platform = await setup();
    const { adapter, intake } = platform;
    await adapter.start();
    const before = await platform.send('before the stop');
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === before));
    await platform.acknowledged(before);
    await adapter.stop();
    expect(adapter.status().running).toBe(false);

    await adapter.start();
    expect(adapter.status()).toEqual({ running: true });
    const after = await platform.send('after the restart');
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === after));
    await platform.acknowledged(after);
    expect(intake.committed.map((m) => m.text)).toEqual(['before the stop', 'after the restart']);
    if (platform.connections) expect(platform.connections()).toBe(1);
  });
});
