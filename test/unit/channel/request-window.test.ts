import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InProcessRequestWindow } from '../../../src/channel/request-window.js';

/** A request that takes `ms` and records when it started. */
function request(started: number[], ms = 0): () => Promise<void> {
  return async () => {
    started.push(Date.now());
    await new Promise((resolve) => setTimeout(resolve, ms));
  };
}

describe('InProcessRequestWindow', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
  });
  afterEach(() => vi.useRealTimers());

  it('runs perWindow requests per key at once, and the next one a window after the oldest ended', async () => {
    const pacer = new InProcessRequestWindow(2, 1000, Date.now);
    const a: number[] = [];
    const b: number[] = [];
    const runs = [pacer.run('a', request(a, 100)), pacer.run('a', request(a, 300)), pacer.run('b', request(b)), pacer.run('a', request(a))];
    await vi.advanceTimersByTimeAsync(5000);
    await Promise.all(runs);
    // The third 'a' waits for the first to end (100 ms) and then a whole window: what the
    // platform saw of the first arrived before 100 ms, so 1100 ms keeps any 1000 ms window at two.
    expect(a).toEqual([0, 0, 1100]);
    expect(b).toEqual([0]);
  });

  it('waits for a request under way when every place is taken by one', async () => {
    const pacer = new InProcessRequestWindow(1, 1000, Date.now);
    const started: number[] = [];
    const slow = pacer.run('chat', request(started, 5000));
    const next = pacer.run('chat', request(started));
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all([slow, next]);
    expect(started).toEqual([0, 6000]);
  });

  it('gives the place back when a request fails', async () => {
    const pacer = new InProcessRequestWindow(1, 1000, Date.now);
    const failed = pacer.run('chat', async () => {
      throw new Error('refused');
    });
    await expect(failed).rejects.toThrow('refused');
    const started: number[] = [];
    const next = pacer.run('chat', request(started));
    await vi.advanceTimersByTimeAsync(2000);
    await next;
    expect(started).toEqual([1000]);
  });

  it('tries without waiting: runs while the window has room, else says how soon a place frees and runs nothing', async () => {
    const pacer = new InProcessRequestWindow(2, 1000, Date.now);
    const started: number[] = [];
    expect(await pacer.tryRun('group', async () => 'first')).toEqual({ ran: true, value: 'first' });
    await vi.advanceTimersByTimeAsync(200);
    expect(await pacer.tryRun('group', async () => 'second')).toEqual({ ran: true, value: 'second' });
    await vi.advanceTimersByTimeAsync(300);
    // Full: the first ended at 0, so a place frees at 1000, 500 ms from now.
    expect(await pacer.tryRun('group', request(started))).toEqual({ ran: false, retryAfterMs: 500 });
    expect(started).toEqual([]);
    // Another key has its own window; a waiting run takes the place once it frees.
    expect((await pacer.tryRun('other', async () => 1)).ran).toBe(true);
    const waiting = pacer.run('group', request(started));
    await vi.advanceTimersByTimeAsync(1000);
    await waiting;
    expect(started).toEqual([1000]);
  });
});
