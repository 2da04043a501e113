import type { MemoryFact, MemorySummaries, UserMemory } from './types.js';

/** Characters counted as one token each: ideographs and syllabaries are dense in every tokenizer. */
const CJK_CHARACTER = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
/** Other text: OpenAI's rule of thumb for English and code. */
const CHARS_PER_TOKEN = 4;

const SUMMARY_LABELS: ReadonlyArray<[keyof MemorySummaries, string]> = [
  ['workContext', 'Work context'],
  ['personalContext', 'Personal context'],
  ['topOfMind', 'Top of mind'],
];

/** Token counts of a text, kept apart so pieces can be added without re-scanning. */
interface TextSize {
  cjkChars: number;
  otherChars: number;
}

function sizeOf(text: string): TextSize {
  let cjkChars = 0;
  let otherChars = 0;
  for (const char of text) {
    if (CJK_CHARACTER.test(char)) cjkChars++;
    else otherChars++;
  }
  return { cjkChars, otherChars };
}

function tokensOf(size: TextSize): number {
  return size.cjkChars + Math.ceil(size.otherChars / CHARS_PER_TOKEN);
}

/**
 * Estimated tokens of `text`, without a tokenizer or network: each Han, Hiragana, Katakana or
 * Hangul character counts as one token, and every other ~4 characters (counted by code point)
 * as one. Real tokenizers put CJK at ~1-2 characters per token, so the estimate errs high there
 * and stays close for English and code; a budget based on it rarely overflows.
 */
export function estimateTokens(text: string): number {
  return tokensOf(sizeOf(text));
}

/**
 * The user's memory as a `<memory>` block for the system prompt: the non-empty summaries, then
 * facts by confidence (highest first, ties newest first), one `- [category] content` line each.
 * Lines are added in that order while the whole block's {@link estimateTokens} stays within
 * `maxTokens`; the first line that does not fit ends the block, so low-confidence facts are the
 * first to go. Returns '' when nothing is known or nothing fits.
 */
export function formatMemoryForPrompt(memory: UserMemory, maxTokens: number): string {
  const open = '<memory>';
  const close = '</memory>';
  const lines: string[] = [];
  const size = sizeOf(`${open}\n${close}`);

  /** Adds the lines if the block stays within budget; all or nothing. */
  const tryAdd = (...added: string[]): boolean => {
    const addedSize = sizeOf(added.map((line) => `${line}\n`).join(''));
    const next = { cjkChars: size.cjkChars + addedSize.cjkChars, otherChars: size.otherChars + addedSize.otherChars };
    if (tokensOf(next) > maxTokens) return false;
    Object.assign(size, next);
    lines.push(...added);
    return true;
  };

  let isFull = false;
  for (const [key, label] of SUMMARY_LABELS) {
    const summary = oneLine(memory.summaries[key]);
    if (summary !== '' && !tryAdd(`${label}: ${summary}`)) {
      isFull = true;
      break;
    }
  }
  let hasFactHeader = false;
  for (const fact of isFull ? [] : byConfidence(memory.facts)) {
    const content = oneLine(fact.content);
    if (content === '') continue;
    const line = `- [${fact.category}] ${content}`;
    // The heading goes in only together with a fact that fits under it.
    if (!(hasFactHeader ? tryAdd(line) : tryAdd('Facts:', line))) break;
    hasFactHeader = true;
  }

  return lines.length === 0 ? '' : `${open}\n${lines.join('\n')}\n${close}`;
}

function byConfidence(facts: MemoryFact[]): MemoryFact[] {
  return [...facts].sort((a, b) => b.confidence - a.confidence || b.createdAt.getTime() - a.createdAt.getTime());
}

/** Keeps each fact on its own list line whatever the model wrote. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
