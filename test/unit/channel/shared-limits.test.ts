import { describe, expect, it } from 'vitest';
import { SharedLimits, STAGGER_FRACTION } from '../../../src/channel/shared-limits.js';

/**
 * Processes whose notices wait in one queue until `deliver()`: what crosses between them, and
 * when, is the test's. Each process has its own clock, and the clocks disagree by an hour.
 */
function processes(count: number, options: { random?: () => number } = {}) {
  const queue: string[] = [];
  const hooks: { afterSleep?: () => void } = {};
  const clocks = Array.from({ length: count }, (_, i) => ({ now: 1_000_000 + i * 3_600_000 }));
  const limits = clocks.map(
    (clock, i) =>
      new SharedLimits({
        broadcast: (payload) => queue.push(payload),
        now: () => clock.now,
        random: options.random ?? (() => 0),
        processId: `p${i}`,
        sleep: async (ms) => {
          clock.now += ms;
          hooks.afterSleep?.();
        },
      }),
  );
  return {
    limits,
    clocks,
    hooks,
    advance(ms: number) {
      for (const clock of clocks) clock.now += ms;
    },
    /** Every queued notice reaches every process, its sender included (as with Redis pub/sub). */
    deliver() {
      for (const payload of queue.splice(0)) for (const process of limits) process.receive(payload);
    },
  };
}

describe('SharedLimits: rate gates', () => {
  it('closes the gate in every process for the remaining time, on each one\'s own clock', () => {
    const { limits, clocks, advance, deliver } = processes(2);
    const [a, b] = limits.map((process) => process.rateGate('slack', 'workspace'));
    a?.block('workspace', 5000);
    expect(b?.isOpen('workspace')).toBe(true);
    deliver();
    expect(b?.isOpen('workspace')).toBe(false);
    expect(b?.blockedUntil('workspace')).toBe((clocks[1]?.now ?? 0) + 5000);
    expect(b?.isOpen('another')).toBe(true);
    advance(5000);
    expect([a?.isOpen('workspace'), b?.isOpen('workspace')]).toEqual([true, true]);
  });

  it('never shortens a block, whichever process heard of the longer one first', () => {
    const { limits, clocks, deliver } = processes(2);
    const [a, b] = limits.map((process) => process.rateGate('telegram', 'chat'));
    b?.block('42', 30_000);
    a?.block('42', 1000);
    deliver();
    expect(b?.blockedUntil('42')).toBe((clocks[1]?.now ?? 0) + 30_000);
    expect(a?.blockedUntil('42')).toBe((clocks[0]?.now ?? 0) + 30_000);
  });

  it('keeps gates of other platforms and names apart', () => {
    const { limits, deliver } = processes(2);
    limits[0]?.rateGate('telegram', 'chat').block('42', 1000);
    deliver();
    expect(limits[1]?.rateGate('discord', 'chat').isOpen('42')).toBe(true);
    expect(limits[1]?.rateGate('telegram', 'other').isOpen('42')).toBe(true);
    expect(limits[1]?.rateGate('telegram', 'chat')).toBe(limits[1]?.rateGate('telegram', 'chat'));
  });

  it('holds a waiter until a block another process met runs out too', async () => {
    const { limits, clocks, hooks, deliver } = processes(2);
    const [a, b] = limits.map((process) => process.rateGate('slack', 'workspace'));
    b?.block('workspace', 1000);
    const startedAt = clocks[1]?.now ?? 0;
    a?.block('workspace', 4000);
    // The notice arrives while the waiter sleeps out its own block; it counts from its arrival.
    hooks.afterSleep = () => {
      hooks.afterSleep = undefined;
      deliver();
    };
    await b?.waitUntilOpen('workspace');
    expect((clocks[1]?.now ?? 0) - startedAt).toBe(1000 + 4000);
    expect(b?.isOpen('workspace')).toBe(true);
  });

  it('goes on alone when notices are lost or malformed', () => {
    const lost = new SharedLimits({ broadcast: () => undefined, processId: 'alone' });
    const gate = lost.rateGate('slack', 'workspace');
    gate.block('workspace', 60_000);
    expect(gate.isOpen('workspace')).toBe(false);
    for (const payload of ['', 'not json', '{}', JSON.stringify({ from: 'x', kind: 'block', platform: 'slack', name: 'workspace', key: 'k', remainingMs: -1 })]) {
      expect(() => lost.receive(payload)).not.toThrow();
    }
    expect(gate.isOpen('k')).toBe(true);
  });
});

describe('SharedLimits: interval budgets', () => {
  it('makes a slot one process took taken in the others, for the remaining time', () => {
    const { limits, advance, deliver } = processes(2);
    const [a, b] = limits.map((process) => process.intervalBudget('slack', 'chat.update', 1200));
    expect(a?.tryTake('workspace')).toBe(true);
    deliver();
    expect(b?.waitMs('workspace')).toBe(1200);
    expect(b?.tryTake('workspace')).toBe(false);
    advance(1200);
    expect(b?.tryTake('workspace')).toBe(true);
    deliver();
    // The sender does not count its own take twice when Redis hands it back.
    expect([a?.waitMs('workspace'), b?.waitMs('workspace')]).toEqual([1200, 1200]);
  });

  it('counts two takes that crossed as two: the next slot moves back by both', () => {
    const { limits, deliver } = processes(3);
    const [a, b, c] = limits.map((process) => process.intervalBudget('slack', 'chat.update', 1200));
    a?.take('workspace');
    b?.take('workspace');
    deliver();
    expect([a?.waitMs('workspace'), b?.waitMs('workspace'), c?.waitMs('workspace')]).toEqual([2400, 2400, 2400]);
  });

  it('adopts a longer backlog from a sender it had not heard of', () => {
    const { limits, deliver } = processes(2);
    const [a, b] = limits.map((process) => process.intervalBudget('slack', 'chat.update', 1000));
    // Finals take slots regardless: four in a row leave a backlog of four intervals.
    for (let i = 0; i < 4; i++) a?.take('workspace');
    deliver();
    expect(b?.waitMs('workspace')).toBe(4000);
  });

  it('staggers the start of a slot by a random share of the interval, and only at its start', () => {
    const { limits, advance } = processes(1, { random: () => 0.5 });
    const budget = limits[0]?.intervalBudget('slack', 'chat.update', 1000);
    budget?.take('workspace');
    const staggerMs = 0.5 * 1000 * STAGGER_FRACTION;
    expect(budget?.waitMs('workspace')).toBe(1000 + staggerMs);
    advance(1000);
    expect(budget?.tryTake('workspace')).toBe(false);
    advance(staggerMs);
    expect(budget?.tryTake('workspace')).toBe(true);
    // A key nobody took waits for nothing.
    expect(budget?.waitMs('idle')).toBe(0);
  });

  it('goes on alone when notices are lost', () => {
    const lost = new SharedLimits({ broadcast: () => undefined, random: () => 0 });
    const budget = lost.intervalBudget('slack', 'chat.update', 1200);
    budget.take('workspace');
    expect(budget.waitMs('workspace')).toBeGreaterThan(0);
    expect(budget.tryTake('workspace')).toBe(false);
  });
});
