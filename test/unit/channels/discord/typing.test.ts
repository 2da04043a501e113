import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TypingIndicators } from '../../../../channels/discord/typing.js';
import { silentLogger } from '../../../../src/logger.js';

describe('TypingIndicators', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('shows typing at once, renews it every 8 s until stopped, and gives up after the cap', async () => {
    const calls: string[] = [];
    const typing = new TypingIndicators({ trigger: async (id) => void calls.push(id), logger: silentLogger(), maxMs: 30_000 });
    typing.start('a');
    typing.start('a'); // already typing: no second loop
    typing.start('b');
    expect(calls).toEqual(['a', 'b']);
    await vi.advanceTimersByTimeAsync(8_000);
    expect(calls).toEqual(['a', 'b', 'a', 'b']);
    typing.stop('a');
    await vi.advanceTimersByTimeAsync(16_000);
    expect(calls.filter((id) => id === 'a')).toHaveLength(2);
    expect(calls.filter((id) => id === 'b')).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(typing.isTyping('b')).toBe(false);
  });

  it('stops when Discord refuses the indicator', async () => {
    const typing = new TypingIndicators({ trigger: () => Promise.reject(new Error('403')), logger: silentLogger() });
    typing.start('a');
    await vi.advanceTimersByTimeAsync(0);
    expect(typing.isTyping('a')).toBe(false);
  });
});
