import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisRequestWindow } from '../../../src/channel/request-window.js';

/** The shared request budget against real Redis (`REDIS_URL`): two windows with one prefix are two processes. */

const redisUrl = process.env.REDIS_URL || undefined;

describe.skipIf(!redisUrl)('RedisRequestWindow', () => {
  let redis: Redis;
  let other: Redis;
  beforeAll(() => {
    redis = new Redis(redisUrl as string);
    other = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    await Promise.all([redis.quit(), other.quit()]);
  });

  /** A request that takes `ms`, recording when it started and ended. */
  const timed = (log: { start: number; end: number }[], ms: number) => async () => {
    const start = Date.now();
    await new Promise((resolve) => setTimeout(resolve, ms));
    log.push({ start, end: Date.now() });
  };

  it('holds requests of two processes to one window, counted until a window after each ended', async () => {
    const prefix = `test-${randomUUID()}:window:feishu:chat`;
    const [a, b] = [new RedisRequestWindow(redis, prefix, 3, 400), new RedisRequestWindow(other, prefix, 3, 400)];
    const log: { start: number; end: number }[] = [];
    await Promise.all(Array.from({ length: 9 }, (_, i) => (i % 2 === 0 ? a : b).run('oc_chat', timed(log, 50))));
    const sorted = [...log].sort((x, y) => x.start - y.start);
    const ends = [...log].map((entry) => entry.end).sort((x, y) => x - y);
    // The 4th request starts no earlier than a window after the 1st ended, and so on.
    for (let i = 3; i < sorted.length; i++) expect((sorted[i] as { start: number }).start).toBeGreaterThanOrEqual((ends[i - 3] as number) + 400 - 5);
    // Other keys have their own window.
    const otherChat: { start: number; end: number }[] = [];
    await Promise.all(Array.from({ length: 3 }, () => a.run('oc_other', timed(otherChat, 100))));
    // All three ran at once: each started before any of them ended.
    expect(Math.max(...otherChat.map((entry) => entry.start))).toBeLessThan(Math.min(...otherChat.map((entry) => entry.end)));
    await redis.del(`${prefix}:oc_chat`, `${prefix}:oc_other`);
  });

  it('tries without waiting across processes: a full window runs nothing and says how soon a place frees', async () => {
    const prefix = `test-${randomUUID()}:window:telegram:group`;
    const [a, b] = [new RedisRequestWindow(redis, prefix, 2, 60_000), new RedisRequestWindow(other, prefix, 2, 60_000)];
    expect(await a.tryRun('-100', async () => 'one')).toEqual({ ran: true, value: 'one' });
    expect(await b.tryRun('-100', async () => 'two')).toEqual({ ran: true, value: 'two' });
    let ran = false;
    const third = await a.tryRun('-100', async () => {
      ran = true;
    });
    expect(ran).toBe(false);
    expect(third.ran).toBe(false);
    if (!third.ran) expect(third.retryAfterMs).toBeGreaterThan(59_000);
    await redis.del(`${prefix}:-100`);
  });

  it('still sends when Redis cannot be reached', async () => {
    const unreachable = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, lazyConnect: true });
    unreachable.on('error', () => undefined);
    const window = new RedisRequestWindow(unreachable, 'test:window', 1, 1000);
    await expect(window.run('chat', async () => 'sent')).resolves.toBe('sent');
    unreachable.disconnect();
  });
});
