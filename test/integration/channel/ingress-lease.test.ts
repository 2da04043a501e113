import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisIngressLease } from '../../../src/channel/ingress-lease.js';

/** The exclusive-ingress lease against real Redis (`REDIS_URL`): two leases with one prefix are two processes. */

const redisUrl = process.env.REDIS_URL || undefined;

describe.skipIf(!redisUrl)('RedisIngressLease', () => {
  const opened: RedisIngressLease[] = [];
  const lease = (prefix: string, ttlMs = 5000) => {
    const made = new RedisIngressLease(redisUrl as string, prefix, ttlMs);
    opened.push(made);
    return made;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map(async (l) => {
      await l.release('telegram');
      await l.close();
    }));
  });

  it('lets one process hold a channel; only the holder renews or releases it', async () => {
    const prefix = `test-${randomUUID()}`;
    const [a, b] = [lease(prefix), lease(prefix)];
    expect(await a.acquire('telegram')).toBe(true);
    expect(await a.acquire('telegram')).toBe(true);
    expect(await b.acquire('telegram')).toBe(false);
    expect(await b.renew('telegram')).toBe(false);
    await b.release('telegram');
    expect(await b.acquire('telegram')).toBe(false);
    expect(await a.renew('telegram')).toBe(true);
    // Another channel is a separate lease.
    expect(await b.acquire('discord')).toBe(true);
    await b.release('discord');
    await a.release('telegram');
    expect(await b.acquire('telegram')).toBe(true);
  });

  it('runs out when its holder stops renewing, and then another process takes it', async () => {
    const prefix = `test-${randomUUID()}`;
    const [a, b] = [lease(prefix, 200), lease(prefix, 200)];
    expect(await a.acquire('telegram')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await b.acquire('telegram')).toBe(true);
    expect(await a.renew('telegram')).toBe(false);
  });

  it('rejects when Redis cannot be reached, instead of waiting', async () => {
    const unreachable = new RedisIngressLease('redis://127.0.0.1:1', `test-${randomUUID()}`, 5000);
    await expect(unreachable.acquire('telegram')).rejects.toThrow();
    await unreachable.close();
  });
});
