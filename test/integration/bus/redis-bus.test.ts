import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedisBus } from '../../../src/bus/redis.js';
import type { InboundMessage } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';

/**
 * The scaled-out bus against real Redis (`REDIS_URL`, set by `.ci/run`): several buses with one
 * prefix are several server processes sharing one queue.
 */

const redisUrl = process.env.REDIS_URL || undefined;

let nextId = 1;
function message(text: string, overrides: Partial<InboundMessage> = {}): InboundMessage {
  const id = String(nextId++);
  return {
    channel: 'telegram',
    chatId: 'c1',
    userId: 'u1',
    workspaceId: 'c1',
    messageId: id,
    text,
    kind: 'chat',
    isPrivateChat: true,
    replyTo: { messageId: id },
    receivedAt: 0,
    ...overrides,
  };
}

async function commit(bus: RedisBus, m: InboundMessage): Promise<void> {
  await (await bus.reserve()).commit(m);
}

describe.skipIf(!redisUrl)('RedisBus', () => {
  const buses: RedisBus[] = [];
  let prefix = '';
  const bus = (options: { maxQueued?: number; concurrency?: number } = {}) => {
    const made = new RedisBus({ url: redisUrl as string, prefix, maxQueued: options.maxQueued ?? 100, concurrency: options.concurrency ?? 2, logger: silentLogger() });
    buses.push(made);
    return made;
  };
  const until = async (condition: () => boolean, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('condition not met');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  beforeEach(() => {
    prefix = `test-${randomUUID()}`;
  });
  afterEach(async () => {
    await Promise.allSettled(buses.splice(0).map((b) => b.stop(0)));
    const redis = new Redis(redisUrl as string);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('hands every committed message to exactly one worker across processes', async () => {
    const handled: { worker: string; text: string }[] = [];
    const [a, b] = [bus(), bus()];
    a.start(async (m) => void handled.push({ worker: 'a', text: m.text }));
    b.start(async (m) => void handled.push({ worker: 'b', text: m.text }));
    const texts = Array.from({ length: 40 }, (_, i) => `message ${i}`);
    for (const [i, text] of texts.entries()) await commit(i % 2 === 0 ? a : b, message(text));
    await until(() => handled.length === texts.length);
    expect(handled.map((h) => h.text).sort()).toEqual([...texts].sort());
    expect(new Set(handled.map((h) => h.worker))).toEqual(new Set(['a', 'b']));
  });

  it('queues the same platform message once, whichever process received it', async () => {
    const [a, b] = [bus(), bus()];
    const same = message('delivered twice');
    await commit(a, same);
    await commit(b, { ...same });
    expect(await a.waiting()).toBe(1);
  });

  it('refuses at once when the shared queue is full, before anything is acknowledged', async () => {
    const [a, b] = [bus({ maxQueued: 3 }), bus({ maxQueued: 3 })];
    for (const text of ['one', 'two']) await commit(a, message(text));
    await a.stop(0);
    buses.splice(buses.indexOf(a), 1);
    expect(await b.hasRoom()).toBe(true);
    await commit(b, message('three'));
    expect(await b.hasRoom()).toBe(false);
    await expect(b.reserve()).rejects.toMatchObject({ code: 'INBOUND_QUEUE_FULL' });
    expect(b.stats().refused).toBe(1);
  });

  it('keeps accepted messages in Redis when a process stops, for the next one to handle', async () => {
    const first = bus();
    for (const text of ['kept 1', 'kept 2']) await commit(first, message(text));
    const report = await first.stop(0);
    expect(report.discarded).toBe(0);
    const handled: string[] = [];
    const next = bus();
    next.start(async (m) => void handled.push(m.text));
    await until(() => handled.length === 2);
    expect(handled.sort()).toEqual(['kept 1', 'kept 2']);
  });

  it('answers ping while Redis is up, and rejects soon when it cannot be reached', async () => {
    await expect(bus().ping()).resolves.toBeUndefined();
    const unreachable = new RedisBus({ url: 'redis://127.0.0.1:1', prefix, maxQueued: 10, concurrency: 1, logger: silentLogger() });
    buses.push(unreachable);
    await expect(unreachable.ping()).rejects.toThrow();
    // Intake refuses at once instead of waiting for Redis: the platform keeps the message.
    await expect(unreachable.reserve()).rejects.toMatchObject({ code: 'INBOUND_QUEUE_FULL' });
    expect(await unreachable.hasRoom()).toBe(false);
  });

  it('tells a worker whose message another worker has taken over that it no longer holds it', async () => {
    const b = bus({ concurrency: 1 });
    const held: boolean[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    b.start(async (_m, _signal, delivery) => {
      held.push((await delivery?.isStillHeld?.()) ?? true);
      await released;
      held.push((await delivery?.isStillHeld?.()) ?? true);
    });
    await commit(b, message('mine, then theirs'));
    await until(() => held.length === 1);
    // What a worker that took the job over after a stall holds: the lock, under its own token.
    const redis = new Redis(redisUrl as string);
    const [lock] = await redis.keys(`${prefix}:*:lock`);
    expect(lock).toBeDefined();
    await redis.set(lock as string, 'another-worker-token', 'PX', 10_000);
    await redis.quit();
    release();
    await until(() => held.length === 2);
    expect(held).toEqual([true, false]);
  });

  it('lets in-flight work finish within the grace period, then aborts it; refuses commits after stop', async () => {
    const b = bus({ concurrency: 1 });
    const outcomes: string[] = [];
    b.start(
      (m, signal) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            outcomes.push(`aborted ${m.text}`);
            resolve();
          });
        }),
    );
    const reservation = await b.reserve();
    await commit(b, message('slow'));
    await until(() => b.stats().inFlight === 1);
    const report = await b.stop(50);
    expect(report).toEqual({ drained: 0, cancelled: 1, discarded: 0 });
    expect(outcomes).toEqual(['aborted slow']);
    await expect(reservation.commit(message('late'))).rejects.toMatchObject({ code: 'INBOUND_QUEUE_CLOSED' });
    await expect(b.reserve()).rejects.toMatchObject({ code: 'INBOUND_QUEUE_CLOSED' });
  });
});
