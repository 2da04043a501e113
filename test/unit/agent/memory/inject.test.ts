import { describe, expect, it } from 'vitest';
import { formatMemoryForPrompt } from '../../../../src/agent/memory/inject.js';
import type { MemoryFact, UserMemory } from '../../../../src/agent/memory/types.js';
import { estimateTokens } from '../../../../src/agent/tokens.js';

const NO_SUMMARIES = { workContext: '', personalContext: '', topOfMind: '' };

let nextId = 0;
function fact(content: string, confidence: number, overrides: Partial<MemoryFact> = {}): MemoryFact {
  nextId++;
  return {
    id: `00000000-0000-4000-8000-${String(nextId).padStart(12, '0')}`,
    content,
    category: 'preference',
    confidence,
    source: 'thread-1',
    createdAt: new Date(Date.UTC(2025, 0, 1, 0, 0, nextId)),
    ...overrides,
  };
}

describe('formatMemoryForPrompt', () => {
  it('is empty when nothing is known', () => {
    expect(formatMemoryForPrompt({ summaries: NO_SUMMARIES, facts: [] }, 2000)).toBe('');
  });

  it('lists non-empty summaries, then facts by confidence, ties newest first', () => {
    const memory: UserMemory = {
      summaries: { workContext: 'Backend engineer at Acme.', personalContext: '', topOfMind: 'Migrating to Postgres 17.' },
      facts: [
        fact('Uses Neovim.', 0.8, { createdAt: new Date('2025-01-01') }),
        fact('Prefers answers in German.', 0.95),
        fact('Knows Go well.', 0.8, { category: 'knowledge', createdAt: new Date('2025-02-01') }),
      ],
    };

    expect(formatMemoryForPrompt(memory, 2000)).toBe(
      [
        '<memory>',
        'Work context: Backend engineer at Acme.',
        'Top of mind: Migrating to Postgres 17.',
        'Facts:',
        '- [preference] Prefers answers in German.',
        '- [knowledge] Knows Go well.',
        '- [preference] Uses Neovim.',
        '</memory>',
      ].join('\n'),
    );
  });

  it('keeps each fact on one line', () => {
    const memory = { summaries: NO_SUMMARIES, facts: [fact('Works on\n\nthe   billing service.', 0.9)] };

    expect(formatMemoryForPrompt(memory, 2000)).toContain('- [preference] Works on the billing service.\n');
  });

  it('drops the lowest-confidence facts first when the budget is small', () => {
    const high = fact('Prefers concise answers.', 0.99);
    const middle = fact('Works with Kubernetes daily.', 0.9);
    const low = fact('Might be learning Rust.', 0.75);
    const withTwo = formatMemoryForPrompt({ summaries: NO_SUMMARIES, facts: [high, middle] }, 2000);

    const result = formatMemoryForPrompt({ summaries: NO_SUMMARIES, facts: [low, middle, high] }, estimateTokens(withTwo));

    expect(result).toBe(withTwo);
    expect(result).not.toContain('Rust');
    expect(estimateTokens(result)).toBeLessThanOrEqual(estimateTokens(withTwo));
  });

  it('counts CJK text densely, so fewer CJK facts fit the same budget', () => {
    const latin = [fact('Likes tea.', 0.9), fact('Likes cats.', 0.8)];
    const cjk = [fact('喜欢喝茶和咖啡。', 0.9), fact('喜欢猫和狗。', 0.8)];
    const budget = estimateTokens(formatMemoryForPrompt({ summaries: NO_SUMMARIES, facts: latin }, 2000));

    const result = formatMemoryForPrompt({ summaries: NO_SUMMARIES, facts: cjk }, budget);

    expect(result).toContain('喜欢喝茶和咖啡。');
    expect(result).not.toContain('喜欢猫和狗。');
  });

  it('is empty when not even one line fits', () => {
    const memory = { summaries: { ...NO_SUMMARIES, workContext: 'A long summary of the work of this user.' }, facts: [] };

    expect(formatMemoryForPrompt(memory, 5)).toBe('');
  });

  it('never shows a facts heading without a fact under it', () => {
    const memory = {
      summaries: { ...NO_SUMMARIES, topOfMind: 'Shipping v2.' },
      facts: [fact('A fact far too long for what is left of the budget.', 0.9)],
    };
    const summaryOnly = formatMemoryForPrompt({ ...memory, facts: [] }, 2000);

    expect(formatMemoryForPrompt(memory, estimateTokens(summaryOnly) + 3)).toBe(summaryOnly);
  });
});
