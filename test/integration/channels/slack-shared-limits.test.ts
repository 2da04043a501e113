import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { slackChannel } from '../../../channels/slack/index.js';
import { RedisLimits } from '../../../src/channel/redis-limits.js';
import type { ChannelAdapter, InboundMessage, Reply } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeSlack } from '../../fakes/slack/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { updateTimesWhileStreaming } from '../../helpers/streaming-partials.js';

/**
 * Two Slack adapters, each with its own Redis connections (two processes scaled out), replying
 * into one fake workspace: together they keep to the workspace's Tier 3 `chat.update` budget,
 * and a 429 one of them meets holds the other's replies back.
 */

const redisUrl = process.env.REDIS_URL || undefined;
const CHANNEL = 'C0TEAM01';
const UPDATE_INTERVAL_MS = 1200;

describe.skipIf(!redisUrl)('Slack scaled out: one workspace budget for every process', () => {
  const channel = `test-${randomUUID().slice(0, 8)}:limits`;
  let redis: Redis;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(() => {
    redis = new Redis(redisUrl as string);
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(async () => {
    await redis.quit();
  });

  /** One process's Slack adapter, its gate and budgets shared through Redis. */
  async function slackProcess(fake: FakeSlack, intake: RecordingIntake, isStarted: boolean): Promise<ChannelAdapter> {
    const limits = new RedisLimits({ url: redisUrl as string, channel, logger: silentLogger() });
    cleanups.push(() => limits.close());
    const config = slackChannel.configSchema.parse({ enabled: true, bot_token: fake.botToken, app_token: fake.appToken, api_url: fake.apiUrl });
    const deps = testChannelDeps({
      intake,
      commands: [],
      logger: silentLogger(),
      rateGate: (name) => limits.rateGate('slack', name),
      intervalBudget: (name, intervalMs) => limits.intervalBudget('slack', name, intervalMs),
    });
    const adapter = await slackChannel.create(config, deps);
    cleanups.push(() => adapter.stop());
    if (isStarted) await adapter.start();
    return adapter;
  }

  /** A fake workspace, two processes (only the first holds the socket), and `count` mentions waiting for a reply. */
  async function twoProcesses(count: number) {
    const fake = new FakeSlack();
    await fake.start();
    cleanups.push(() => fake.stop());
    const intake = new RecordingIntake();
    const processes = [await slackProcess(fake, intake, true), await slackProcess(fake, intake, false)] as const;
    // A notice sent before a process subscribed never reaches it.
    await vi.waitFor(async () => expect(await redis.pubsub('NUMSUB', channel)).toEqual([channel, 2]), { timeout: 10_000, interval: 20 });
    for (let i = 0; i < count; i++) {
      await fake.sendUserMessage({ channel: CHANNEL, channelType: 'channel', user: 'U0ALICE1', text: `<@${fake.botUserId}> question ${i}`, eventType: 'app_mention' });
    }
    await intake.waitUntil(() => intake.committed.length === count);
    // Replies alternate between the processes, as the queue hands messages to any worker.
    const replies = intake.committed.map((message: InboundMessage, i): Reply => {
      const target = { chatId: message.chatId, topicId: message.topicId, isPrivateChat: message.isPrivateChat, replyTo: message.replyTo };
      return (processes[i % 2] as ChannelAdapter).egress.reply(target);
    });
    return { fake, replies };
  }

  it('keeps the replies of two processes within one Tier 3 chat.update budget', async () => {
    const { fake, replies } = await twoProcesses(4);
    const at = await updateTimesWhileStreaming(fake, replies);
    // Per-process budgets would allow two updates per interval. Shared, any stretch holds at most
    // what the budget allows plus one: two processes taking a slot within the time a notice
    // needs to cross both send, and both takes push the next slot back. Undocumented timing
    // slack: timers fire a few ms early or late.
    const excess = at.flatMap((from, i) => at.slice(i + 1).map((to, j) => j + 1 - (Math.floor((to - from + 50) / UPDATE_INTERVAL_MS) + 1)));
    expect(excess.filter((over) => over > 0)).toEqual([]);
    await Promise.all(replies.map((reply, i) => reply.finish(`done ${i}`)));
    expect(fake.botMessages(CHANNEL).map((m) => m.text).sort()).toEqual(['done 0', 'done 1', 'done 2', 'done 3']);
  }, 60_000);

  it('holds the other process\'s replies back while a 429 one process met runs', async () => {
    const { fake, replies } = await twoProcesses(2);
    const [first, second] = replies as [Reply, Reply];
    fake.failNext('chat.update', { kind: 'rate-limit', retryAfterSeconds: 3 });
    first.update('first, limited');
    const limited = await fake.waitFor(() => fake.calls.find((c) => c.method === 'chat.update' && c.response?.ok === false));
    const timer = setInterval(() => second.update(`second at ${Date.now()}`), 100);
    const shown = await fake.waitFor(() => fake.calls.find((c) => c.method === 'chat.update' && c.response?.ok === true), 15_000).finally(() => clearInterval(timer));
    expect(shown.at - limited.at).toBeGreaterThanOrEqual(3000);
    expect(fake.rateLimitViolations).toEqual([]);
    await Promise.all([first.finish('first done'), second.finish('second done')]);
    expect(fake.botMessages(CHANNEL).map((m) => m.text).sort()).toEqual(['first done', 'second done']);
  }, 30_000);
});
