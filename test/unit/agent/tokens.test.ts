import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../../src/agent/tokens.js';

describe('estimateTokens', () => {
  it.each([
    ['', 0],
    ['abcd', 1],
    ['abcde', 2],
    ['你好世界', 4],
    ['こんにちは', 5],
    ['안녕하세요', 5],
    ['你好 abcd', 2 + 2],
  ])('estimates %j as %i tokens', (text, tokens) => {
    expect(estimateTokens(text)).toBe(tokens);
  });

  it('counts a character outside the basic plane once', () => {
    // 𠀀 is a Han character written as a surrogate pair; 😀 is one code point of other text.
    expect(estimateTokens('𠀀')).toBe(1);
    expect(estimateTokens('😀😀😀😀')).toBe(1);
  });

  it('gives the same count however often it is called (no regex state carried over)', () => {
    expect([estimateTokens('你好'), estimateTokens('你好'), estimateTokens('你好')]).toEqual([2, 2, 2]);
  });
});
