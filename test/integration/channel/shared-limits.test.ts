import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Coordination } from '../../../src/coordination.js';
import { silentLogger } from '../../../src/logger.js';
import { createRedisCoordination } from '../../../src/redis-coordination.js';
import { deleteRedisKeys } from '../../helpers/redis-keys.js';
import { TcpProxy } from '../../helpers/tcp-proxy.js';

/**
 * 429 gates and interval budgets against real Redis (`REDIS_URL`): two coordinations with one
 * key prefix are two processes of one deployment.
 */

const redisUrl = process.env.REDIS_URL || undefined;

describe.skipIf(!redisUrl)('shared rate gates and interval budgets (Redis)', () => {
  const prefix = `test-${randomUUID().slice(0, 8)}`;
  const channel = `${prefix}:limits`;
  const opened: Coordination[] = [];
  let redis: Redis;
  let proxy: TcpProxy | undefined;

  const coordinationAt = (url: string): Coordination => {
    const coordination = createRedisCoordination({ url, prefix, handoverMs: 2000, busOptions: { maxQueued: 10, concurrency: 1, logger: silentLogger() }, logger: silentLogger() });
    opened.push(coordination);
    return coordination;
  };
  /** Until `count` processes listen: a notice sent before a process subscribed never reaches it. */
  const subscribers = (count: number) =>
    vi.waitFor(async () => expect(await redis.pubsub('NUMSUB', channel)).toEqual([channel, count]), { timeout: 10_000, interval: 20 });

  beforeAll(() => {
    redis = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    proxy?.restore();
    for (const coordination of opened) {
      await coordination.bus.stop(0);
      await coordination.lease?.close();
      await coordination.close();
    }
    await proxy?.stop();
    await redis.quit();
    await deleteRedisKeys(redisUrl as string, prefix);
  });

  it('closes the gate in the other process when one meets a 429, and paces both by one budget', async () => {
    const [one, two] = [coordinationAt(redisUrl as string), coordinationAt(redisUrl as string)];
    const gates = [one.rateGate('slack', 'workspace'), two.rateGate('slack', 'workspace')] as const;
    const budgets = [one.intervalBudget('slack', 'chat.update', 1200), two.intervalBudget('slack', 'chat.update', 1200)] as const;
    await subscribers(2);

    gates[0].block('workspace', 30_000);
    await vi.waitFor(() => expect(gates[1].isOpen('workspace')).toBe(false));
    // Counted from when the notice arrived: about the 30 s the platform asked for, never more.
    expect((gates[1].blockedUntil('workspace') ?? 0) - Date.now()).toBeLessThanOrEqual(30_000);
    expect(gates[1].isOpen('another')).toBe(true);

    expect(budgets[1].tryTake('workspace')).toBe(true);
    await vi.waitFor(() => expect(budgets[0].waitMs('workspace')).toBeGreaterThan(0));
    expect(budgets[0].tryTake('workspace')).toBe(false);
    // Other platforms and names are not touched.
    expect(one.rateGate('telegram', 'chat').isOpen('workspace')).toBe(true);
    expect(two.intervalBudget('slack', 'chat.appendStream', 600).waitMs('workspace')).toBe(0);
  });

  it('goes on alone when Redis cannot be reached: nothing throws, the process\'s own limits hold', async () => {
    const alone = coordinationAt('redis://127.0.0.1:1');
    const gate = alone.rateGate('telegram', 'chat');
    const budget = alone.intervalBudget('slack', 'chat.update', 1200);
    expect(() => gate.block('42', 10_000)).not.toThrow();
    expect(gate.isOpen('42')).toBe(false);
    expect(() => budget.take('workspace')).not.toThrow();
    expect(budget.waitMs('workspace')).toBeGreaterThan(0);
    expect(budget.tryTake('workspace')).toBe(false);
  });

  it('shares blocks again once a process\'s connection is back after an outage', async () => {
    const proxied = await TcpProxy.inFrontOf(redisUrl as string, 6379);
    proxy = proxied.proxy;
    const [, listening] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
    const [direct, cutOff] = [coordinationAt(redisUrl as string), coordinationAt(proxied.url)];
    const gates = [direct.rateGate('discord', 'chat'), cutOff.rateGate('discord', 'chat')] as const;
    await subscribers(listening + 2);
    proxy.cut();
    await subscribers(listening + 1);
    // Cut off, the process still keeps its own 429s; the notice is dropped, not queued.
    expect(() => gates[1].block('during', 10_000)).not.toThrow();
    expect(gates[1].isOpen('during')).toBe(false);
    proxy.restore();
    await subscribers(listening + 2);
    gates[0].block('after', 10_000);
    await vi.waitFor(() => expect(gates[1].isOpen('after')).toBe(false), { timeout: 10_000 });
    // Its publishing connection may come back a moment after the subscriber: block until heard.
    await vi.waitFor(
      () => {
        gates[1].block('back', 10_000);
        expect(gates[0].isOpen('back')).toBe(false);
      },
      { timeout: 10_000, interval: 50 },
    );
    // A notice queued through the outage would have arrived before this one, late.
    expect(gates[0].isOpen('during')).toBe(true);
  }, 30_000);
});
