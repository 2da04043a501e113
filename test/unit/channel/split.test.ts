import { describe, expect, it } from 'vitest';
import { splitText, truncateText } from '../../../src/channel/split.js';

const EMOJI = '😀'; // one code point, two UTF-16 units

/** No lone surrogate anywhere (String#isWellFormed is ES2024, past our lib). */
function isWellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

describe('splitText', () => {
  it.each([
    { name: 'empty input', text: '', max: 10, chunks: [] },
    { name: 'fits exactly', text: 'abcdefghij', max: 10, chunks: ['abcdefghij'] },
    { name: 'hard cut without newlines', text: 'abcdefghijklmno', max: 10, chunks: ['abcdefghij', 'klmno'] },
    { name: 'cuts after a newline in the second half', text: 'abcdef\nghijklmno', max: 10, chunks: ['abcdef\n', 'ghijklmno'] },
    { name: 'newline at the window edge', text: 'abcdefghi\njk', max: 10, chunks: ['abcdefghi\n', 'jk'] },
    { name: 'ignores a newline in the first half', text: 'ab\ncdefghijklm', max: 10, chunks: ['ab\ncdefghi', 'jklm'] },
    { name: 'prefers the last newline', text: 'abcdef\ngh\nijkl', max: 12, chunks: ['abcdef\ngh\n', 'ijkl'] },
    { name: 'many chunks', text: 'a'.repeat(25), max: 10, chunks: ['a'.repeat(10), 'a'.repeat(10), 'a'.repeat(5)] },
    {
      name: 'never cuts a surrogate pair',
      text: `abcdefghi${EMOJI}xyz`,
      max: 10,
      chunks: ['abcdefghi', `${EMOJI}xyz`],
    },
    { name: 'pairs that line up are kept whole', text: EMOJI.repeat(6), max: 4, chunks: [EMOJI.repeat(2), EMOJI.repeat(2), EMOJI.repeat(2)] },
    { name: 'odd window with pairs', text: EMOJI.repeat(3), max: 3, chunks: [EMOJI, EMOJI, EMOJI] },
  ])('$name', ({ text, max, chunks }) => {
    expect(splitText(text, max)).toEqual(chunks);
  });

  it('keeps every character, in order, in chunks within the limit', () => {
    const text = Array.from({ length: 400 }, (_, i) => `line ${i} ${EMOJI.repeat(i % 7)}\n`).join('');
    const chunks = splitText(text, 97);
    expect(chunks.join('')).toBe(text);
    for (const chunk of chunks) {
      expect(chunk.length).toBeGreaterThan(0);
      expect(chunk.length).toBeLessThanOrEqual(97);
      expect(isWellFormed(chunk)).toBe(true);
    }
  });

  it('splits a 5,000-character reply at 4096 into two messages', () => {
    const chunks = splitText('x'.repeat(5000), 4096);
    expect(chunks.map((c) => c.length)).toEqual([4096, 904]);
  });

  it.each([0, 1, 2.5, Number.NaN])('rejects maxChars %s', (max) => {
    expect(() => splitText('abc', max)).toThrow(RangeError);
  });
});

describe('truncateText', () => {
  it.each([
    { name: 'short text unchanged', text: 'hello', max: 5, out: 'hello' },
    { name: 'long text gets an ellipsis', text: 'hello world', max: 6, out: 'hello…' },
    { name: 'does not split a surrogate pair', text: `abcd${EMOJI}ef`, max: 6, out: 'abcd…' },
    { name: 'keeps a whole pair that fits', text: `abc${EMOJI}ef`, max: 6, out: `abc${EMOJI}…` },
  ])('$name', ({ text, max, out }) => {
    const result = truncateText(text, max);
    expect(result).toBe(out);
    expect(result.length).toBeLessThanOrEqual(max);
  });

  it('caps a partial at 4096 with 4095 characters plus …', () => {
    const result = truncateText('y'.repeat(5000), 4096);
    expect(result).toHaveLength(4096);
    expect(result.endsWith('y…')).toBe(true);
  });
});
