import { describe, expect, it } from 'vitest';
import { InProcessRateGate } from '../../../src/channel/rate-gate.js';

/** A manual clock whose sleep advances time instead of waiting. */
function manualClock(start = 0) {
  let now = start;
  const slept: number[] = [];
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
    slept,
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
  };
}

describe('InProcessRateGate', () => {
  it('is open for unknown keys and closed for blocked ones until the time passes', () => {
    const clock = manualClock(1000);
    const gate = new InProcessRateGate(clock);
    expect(gate.isOpen('a')).toBe(true);
    gate.block('a', 500);
    expect(gate.isOpen('a')).toBe(false);
    expect(gate.blockedUntil('a')).toBe(1500);
    expect(gate.isOpen('b')).toBe(true);
    clock.advance(499);
    expect(gate.isOpen('a')).toBe(false);
    clock.advance(1);
    expect(gate.isOpen('a')).toBe(true);
    expect(gate.blockedUntil('a')).toBeUndefined();
  });

  it('never shortens a block', () => {
    const clock = manualClock();
    const gate = new InProcessRateGate(clock);
    gate.block('a', 3000);
    gate.block('a', 1000);
    expect(gate.blockedUntil('a')).toBe(3000);
    gate.block('a', 5000);
    expect(gate.blockedUntil('a')).toBe(5000);
  });

  it('waitUntilOpen sleeps exactly the remaining time, and again if the block grows', async () => {
    const clock = manualClock();
    let extended = false;
    const gate = new InProcessRateGate({
      now: clock.now,
      sleep: async (ms) => {
        await clock.sleep(ms);
        if (!extended) {
          extended = true;
          gate.block('a', 700);
        }
      },
    });
    gate.block('a', 2000);
    await gate.waitUntilOpen('a');
    expect(clock.slept).toEqual([2000, 700]);
    expect(gate.isOpen('a')).toBe(true);
  });

  it('waitUntilOpen returns at once when open and rejects when aborted', async () => {
    const gate = new InProcessRateGate();
    await expect(gate.waitUntilOpen('a')).resolves.toBeUndefined();
    gate.block('a', 60_000);
    const abort = new AbortController();
    const waiting = gate.waitUntilOpen('a', abort.signal);
    abort.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
  });

  it('forgets open keys when many piled up, never a blocked one', () => {
    const clock = manualClock();
    const gate = new InProcessRateGate(clock);
    gate.block('blocked', 60_000);
    for (let i = 0; i < 3000; i++) gate.block(`chat-${i}`, 10);
    clock.advance(10);
    for (let i = 0; i < 3000; i++) gate.block(`later-${i}`, 10);
    expect(gate.blockedUntil('blocked')).toBe(60_000);
    expect(gate.isOpen('chat-0')).toBe(true);
  });
});
