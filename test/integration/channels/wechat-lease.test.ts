import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { wechatChannel } from '../../../channels/wechat/index.js';
import { CURSOR_KEY } from '../../../channels/wechat/ingress.js';
import { RedisIngressLease } from '../../../src/channel/ingress-lease.js';
import { ChannelStarter } from '../../../src/channel/starter.js';
import type { ChannelAdapter } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeWeChat } from '../../fakes/wechat/index.js';
import { MemoryChannelState, MemoryWebhookDeliveries, testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { weChatTestConfig } from '../../helpers/wechat-config.js';

/**
 * Two processes of one deployment (two adapters sharing the channel state and delivery store, as
 * they share the database, and one Redis lease prefix): only the lease holder polls iLink; when it
 * stops, the other takes over from the saved cursor, and nothing is taken twice.
 */

const redisUrl = process.env.REDIS_URL || undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!redisUrl)('WeChat scaled out', () => {
  it('polls only in the process holding the lease, and hands over from the saved cursor', async () => {
    const fake = new FakeWeChat({ longPollHoldMs: 200 });
    await fake.start();
    cleanups.push(() => fake.stop());
    const prefix = `test-${randomUUID()}`;
    const state = new MemoryChannelState();
    const deliveries = new MemoryWebhookDeliveries();
    const config = weChatTestConfig(fake);
    const processes = await Promise.all(
      [0, 1].map(async () => {
        const intake = new RecordingIntake();
        const adapter: ChannelAdapter = await wechatChannel.create(config, testChannelDeps({ intake, commands: [], logger: silentLogger(), state, deliveries }));
        const lease = new RedisIngressLease(redisUrl as string, prefix, 600);
        const starter = new ChannelStarter({ logger: silentLogger(), lease });
        const stop = async () => {
          await starter.stop();
          await adapter.stop();
          await starter.releaseLeases();
        };
        cleanups.push(stop);
        return { intake, adapter, starter, stop };
      }),
    );
    const [first, second] = processes as [(typeof processes)[0], (typeof processes)[0]];
    await first.starter.startAll([first.adapter]);
    await second.starter.startAll([second.adapter]);
    expect(first.starter.status(first.adapter)).toEqual({ running: true });
    expect(second.starter.status(second.adapter)).toMatchObject({ running: false, standby: true });

    const before = fake.sendUserMessage({ userId: 'alice@im.wechat', text: 'to the holder' });
    await first.intake.waitUntil(() => first.intake.committed.length === 1);
    expect(first.intake.committed[0]?.messageId).toBe(before.messageId);
    // Its cursor is saved once the batch is handled: wait for the poll after it.
    const polls = () => fake.calls.filter((c) => c.path === '/ilink/bot/getupdates').length;
    const seen = polls();
    await fake.waitFor(() => polls() > seen);

    await first.stop();
    const pollsAtHandover = polls();
    const savedCursor = state.entries.get(CURSOR_KEY);
    await fake.waitFor(() => second.starter.status(second.adapter).running || undefined, 10_000);
    await fake.waitFor(() => polls() > pollsAtHandover);
    const firstPollOfSecond = fake.calls.filter((c) => c.path === '/ilink/bot/getupdates')[pollsAtHandover];
    expect(savedCursor).toMatch(/\S/);
    expect((firstPollOfSecond?.body as { get_updates_buf?: string } | undefined)?.get_updates_buf).toBe(savedCursor);
    const after = fake.sendUserMessage({ userId: 'alice@im.wechat', text: 'to the new holder' });
    await second.intake.waitUntil(() => second.intake.committed.some((m) => m.messageId === after.messageId));
    expect(second.intake.committed.map((m) => m.messageId)).toEqual([after.messageId]);
    expect(second.intake.reserved).toBe(1);
    expect(first.intake.committed.map((m) => m.messageId)).toEqual([before.messageId]);
  });
});
