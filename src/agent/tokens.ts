/** Characters counted as one token each: ideographs and syllabaries are dense in every tokenizer. */
const CJK_CHARACTERS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;
/** A UTF-16 surrogate pair: one code point in two string units. */
const SURROGATE_PAIRS = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
/** Other text: OpenAI's rule of thumb for English and code. */
const CHARS_PER_TOKEN = 4;

/** A text's size in the two kinds of characters the estimate tells apart; sizes of pieces add up. */
export interface TextSize {
  cjkChars: number;
  otherChars: number;
}

export function textSize(text: string): TextSize {
  // Two regex scans rather than a loop over code points: irregexp counts a long text far faster.
  const cjkChars = countMatches(text, CJK_CHARACTERS);
  const codePoints = text.length - countMatches(text, SURROGATE_PAIRS);
  return { cjkChars, otherChars: codePoints - cjkChars };
}

export function tokensOfSize(size: TextSize): number {
  return size.cjkChars + Math.ceil(size.otherChars / CHARS_PER_TOKEN);
}

/**
 * Estimated tokens of `text`, without a tokenizer or network: each Han, Hiragana, Katakana or
 * Hangul character counts as one token, and every other ~4 characters (counted by code point)
 * as one. Real tokenizers put CJK at ~1-2 characters per token, so the estimate errs high there
 * and stays close for English and code; a budget based on it rarely overflows.
 */
export function estimateTokens(text: string): number {
  return tokensOfSize(textSize(text));
}

function countMatches(text: string, pattern: RegExp): number {
  let count = 0;
  pattern.lastIndex = 0;
  while (pattern.exec(text) !== null) count++;
  return count;
}
