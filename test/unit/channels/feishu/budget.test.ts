import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AppBudget } from '../../../../channels/feishu/budget.js';
import { InProcessRequestWindow } from '../../../../src/channel/request-window.js';

/** A request that takes `ms` and records when it started. */
function request(started: number[], ms = 0): () => Promise<void> {
  return async () => {
    started.push(Date.now());
    await new Promise((resolve) => setTimeout(resolve, ms));
  };
}

describe('AppBudget (Feishu), over two windows', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(0);
  });
  afterEach(() => vi.useRealTimers());

  it('holds each method to every window: here 3 a second and 4 a minute', async () => {
    const budget = new AppBudget([new InProcessRequestWindow(3, 1000, Date.now), new InProcessRequestWindow(4, 60_000, Date.now)]);
    const replies: number[] = [];
    const cards: number[] = [];
    const runs = [
      ...Array.from({ length: 5 }, () => budget.run('im.message.reply', request(replies))),
      budget.run('cardkit.card.create', request(cards)),
    ];
    await vi.advanceTimersByTimeAsync(120_000);
    await Promise.all(runs);
    expect(replies).toEqual([0, 0, 0, 1000, 60_000]);
    expect(cards).toEqual([0]);
  });
});
