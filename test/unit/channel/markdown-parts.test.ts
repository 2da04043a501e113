import { describe, expect, it } from 'vitest';
import { PLAIN_TEXT_DIALECT, renderMarkdown } from '../../../src/channel/markdown.js';
import { markdownParts } from '../../../src/channel/markdown-parts.js';

/** A platform that shows the visible text: each part is measured as what it shows. */
const shownLength = (part: string) => renderMarkdown(part, PLAIN_TEXT_DIALECT).length;

describe('markdownParts', () => {
  it('keeps a text that fits whole, and gives nothing for a blank one', () => {
    expect(markdownParts('a **b** c', 100, shownLength)).toEqual(['a **b** c']);
    expect(markdownParts(' \n\n ', 100, shownLength)).toEqual([]);
  });

  it('measures with the platform: a part may be longer than the limit as Markdown, never as shown', () => {
    const paragraphs = Array.from({ length: 6 }, (_, i) => `**${String(i).repeat(30)}**`);
    const parts = markdownParts(paragraphs.join('\n\n'), 100, shownLength);
    expect(parts.map(shownLength).every((length) => length <= 100)).toBe(true);
    expect(parts.some((part) => part.length > 100)).toBe(true);
    expect(parts.map((part) => renderMarkdown(part, PLAIN_TEXT_DIALECT)).join('\n\n')).toBe(paragraphs.map((p) => p.slice(2, -2)).join('\n\n'));
  });

  it('cuts a long code block between lines, every part fenced with its language again', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `echo ${i} && true`);
    const parts = markdownParts(`\`\`\`sh\n${lines.join('\n')}\n\`\`\``, 120, shownLength);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.every((part) => part.startsWith('```sh\n') && part.trimEnd().endsWith('```'))).toBe(true);
    expect(parts.map((part) => renderMarkdown(part, PLAIN_TEXT_DIALECT)).join('\n')).toBe(lines.join('\n'));
  });

  it('escapes a block marker that a cut would put at the start of a part, so it shows as written', () => {
    const text = `${'w'.repeat(38)} - ${'v'.repeat(30)}`;
    const parts = markdownParts(text, 40, shownLength);
    expect(parts).toHaveLength(2);
    expect(parts[1]?.startsWith('\\- ')).toBe(true);
    expect(parts.map((part) => renderMarkdown(part, PLAIN_TEXT_DIALECT)).join('')).toBe(text);
  });
});
