import { textSize, tokensOfSize } from '../tokens.js';
import type { MemoryFact, MemorySummaries, UserMemory } from './types.js';

const SUMMARY_LABELS: ReadonlyArray<[keyof MemorySummaries, string]> = [
  ['workContext', 'Work context'],
  ['personalContext', 'Personal context'],
  ['topOfMind', 'Top of mind'],
];

/**
 * The user's memory as a `<memory>` block for the system prompt: the non-empty summaries, then
 * facts by confidence (highest first, ties newest first), one `- [category] content` line each.
 * Lines are added in that order while the whole block's estimated tokens (`src/agent/tokens.ts`) stays within
 * `maxTokens`; the first line that does not fit ends the block, so low-confidence facts are the
 * first to go. Returns '' when nothing is known or nothing fits.
 */
export function formatMemoryForPrompt(memory: UserMemory, maxTokens: number): string {
  const open = '<memory>';
  const close = '</memory>';
  const lines: string[] = [];
  const size = textSize(`${open}\n${close}`);

  /** Adds the lines if the block stays within budget; all or nothing. */
  const tryAdd = (...added: string[]): boolean => {
    const addedSize = textSize(added.map((line) => `${line}\n`).join(''));
    const next = { cjkChars: size.cjkChars + addedSize.cjkChars, otherChars: size.otherChars + addedSize.otherChars };
    if (tokensOfSize(next) > maxTokens) return false;
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
