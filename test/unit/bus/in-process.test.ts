import { describe, expect, it } from 'vitest';
import { InProcessBus } from '../../../src/bus/in-process.js';
import type { InboundMessage } from '../../../src/channel/types.js';
import { AppError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';

function message(text: string): InboundMessage {
  return { channel: 'test', chatId: 'c1', userId: 'u1', text, kind: 'chat', isPrivateChat: true, replyTo: {}, receivedAt: 0 };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function publish(bus: InProcessBus, text: string): Promise<void> {
  await (await bus.reserve()).commit(message(text));
}

function codeOf(error: unknown): string | undefined {
  return error instanceof AppError ? error.code : undefined;
}

describe('InProcessBus', () => {
  it('hands messages to workers in arrival order', async () => {
    const bus = new InProcessBus({ maxQueued: 10, concurrency: 1, logger: silentLogger() });
    const seen: string[] = [];
    const done = deferred();
    bus.start(async (m) => {
      seen.push(m.text);
      if (seen.length === 3) done.resolve();
    });
    for (const text of ['a', 'b', 'c']) await publish(bus, text);
    await done.promise;
    expect(seen).toEqual(['a', 'b', 'c']);
    await bus.stop(100);
  });

  it('refuses at once when queued messages plus reservations reach the limit', async () => {
    const bus = new InProcessBus({ maxQueued: 2, concurrency: 1, logger: silentLogger() });
    const held = await bus.reserve();
    expect(await bus.hasRoom()).toBe(true);
    await publish(bus, 'queued');
    expect(await bus.hasRoom()).toBe(false);
    await expect(bus.reserve()).rejects.toSatisfy((e) => codeOf(e) === 'INBOUND_QUEUE_FULL');
    held.release();
    expect(await bus.hasRoom()).toBe(true);
    held.release(); // idempotent: frees exactly one slot
    await publish(bus, 'fits again');
    await expect(bus.reserve()).rejects.toSatisfy((e) => codeOf(e) === 'INBOUND_QUEUE_FULL');
    expect(bus.stats()).toEqual({ queued: 2, inFlight: 0, refused: 2 });
    await bus.stop(0);
  });

  it('never runs more handlers at once than its concurrency', async () => {
    const bus = new InProcessBus({ maxQueued: 100, concurrency: 3, logger: silentLogger() });
    let running = 0;
    let peak = 0;
    let finished = 0;
    const allDone = deferred();
    bus.start(async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (++finished === 20) allDone.resolve();
    });
    for (let i = 0; i < 20; i++) await publish(bus, String(i));
    await allDone.promise;
    expect(peak).toBe(3);
    await bus.stop(100);
  });

  it('on stop, lets in-flight work finish within the grace period and discards what never started', async () => {
    const bus = new InProcessBus({ maxQueued: 10, concurrency: 1, logger: silentLogger() });
    const started = deferred();
    const release = deferred();
    const handled: string[] = [];
    bus.start(async (m) => {
      started.resolve();
      await release.promise;
      handled.push(m.text);
    });
    await publish(bus, 'in flight');
    await publish(bus, 'never started');
    await started.promise;
    const stopping = bus.stop(5_000);
    release.resolve();
    expect(await stopping).toEqual({ drained: 1, cancelled: 0, discarded: 1 });
    expect(handled).toEqual(['in flight']);
  });

  it('aborts in-flight work when the grace period runs out', async () => {
    const bus = new InProcessBus({ maxQueued: 10, concurrency: 1, logger: silentLogger() });
    const started = deferred();
    let sawAbort = false;
    bus.start(
      (_m, signal) =>
        new Promise<void>((resolve) => {
          started.resolve();
          signal.addEventListener('abort', () => {
            sawAbort = true;
            resolve();
          });
        }),
    );
    await publish(bus, 'slow');
    await started.promise;
    expect(await bus.stop(20)).toEqual({ drained: 0, cancelled: 1, discarded: 0 });
    expect(sawAbort).toBe(true);
  });

  it('refuses new reservations after stop and invalidates the ones taken before', async () => {
    const bus = new InProcessBus({ maxQueued: 10, concurrency: 1, logger: silentLogger() });
    bus.start(async () => {});
    const early = await bus.reserve();
    await bus.stop(0);
    await expect(early.commit(message('late'))).rejects.toMatchObject({ code: 'INBOUND_QUEUE_CLOSED' });
    await expect(bus.reserve()).rejects.toSatisfy((e) => codeOf(e) === 'INBOUND_QUEUE_CLOSED');
  });
});
