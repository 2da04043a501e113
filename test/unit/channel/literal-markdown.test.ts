import { describe, expect, it } from 'vitest';
import { lexMarkdown, PLAIN_TEXT_DIALECT, renderMarkdown } from '../../../src/channel/markdown.js';
import { literalMarkdown } from '../../../src/channel/markdown-syntax.js';
import { QUOTED_CASES } from '../../contract/round-trip.js';

const QUOTED = QUOTED_CASES.map((quoted) => quoted.text);

describe('literalMarkdown', () => {
  it.each(QUOTED)('shows %j exactly as written', (text) => {
    expect(renderMarkdown(literalMarkdown(text), PLAIN_TEXT_DIALECT)).toBe(text);
  });

  it.each(QUOTED)('makes no markup of %j: only text, paragraphs and the addresses marked links', (text) => {
    const types = new Set<string>();
    const visit = (tokens: ReturnType<typeof lexMarkdown>): void => {
      for (const token of tokens) {
        types.add(token.type);
        if ('tokens' in token && token.tokens) visit(token.tokens);
      }
    };
    visit(lexMarkdown(literalMarkdown(text)));
    expect([...types].filter((type) => !['paragraph', 'text', 'escape', 'link', 'space'].includes(type))).toEqual([]);
  });

  it('leaves a web address as written, so it is linked whole', () => {
    const [paragraph] = lexMarkdown(literalMarkdown('docs at https://example.com/a_b_(c) now'));
    const link = (paragraph as { tokens: { type: string; href?: string }[] }).tokens.find((token) => token.type === 'link');
    expect(link?.href).toBe('https://example.com/a_b_(c)');
  });
});
