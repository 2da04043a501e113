import { describe, expect, it } from 'vitest';
import { alignedTable, type MarkdownDialect, PLAIN_TEXT_DIALECT, renderMarkdown } from '../../../src/channel/markdown.js';
import { ROUND_TRIP_CASES } from '../../contract/round-trip.js';

/** The round-trip table's canonical form, written as a dialect: visible text, links as their label. */
const CANONICAL: MarkdownDialect = { ...PLAIN_TEXT_DIALECT, link: (label) => label };

/** Shows every construct, to see what the walker asks for and in what order. */
const TAGGED: MarkdownDialect = {
  text: (text) => text.replace(/[<>&]/g, (c) => `&#${c.charCodeAt(0)};`),
  strong: (inner) => `<b>${inner}</b>`,
  emphasis: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  inlineCode: (code) => `<code>${code}</code>`,
  link: (label, url) => `<a ${url}>${label}</a>`,
  codeBlock: (code, language) => `<pre ${language ?? '-'}>${code}</pre>`,
};

describe('renderMarkdown', () => {
  for (const roundTrip of ROUND_TRIP_CASES) {
    it(`gives the round-trip table's shown text for ${roundTrip.name}`, () => {
      expect(renderMarkdown(roundTrip.typed, CANONICAL)).toBe(roundTrip.shown);
    });
  }

  it('escapes prose once, through the dialect, and leaves code raw', () => {
    expect(renderMarkdown('a < b & `c < d`\n\n```sh\nx && y > z\n```', TAGGED)).toBe(
      'a &#60; b &#38; <code>c < d</code>\n\n<pre sh>x && y > z</pre>',
    );
  });

  it('keeps entities and character references as the characters typed', () => {
    expect(renderMarkdown('&amp; &#39; &lt;', CANONICAL)).toBe('&amp; &#39; &lt;');
  });

  it('treats raw HTML as text', () => {
    expect(renderMarkdown('<div>\nhi\n</div>', TAGGED)).toBe('&#60;div&#62;\nhi\n&#60;/div&#62;');
    expect(renderMarkdown('x <b>y</b>', TAGGED)).toBe('x &#60;b&#62;y&#60;/b&#62;');
  });

  it('nests emphasis inside links and strong', () => {
    expect(renderMarkdown('**a _b_ [c `d`](https://e.test)**', TAGGED)).toBe('<b>a <i>b</i> <a https://e.test>c <code>d</code></a></b>');
  });

  it('numbers ordered lists from their start, nests them, and marks task items', () => {
    expect(renderMarkdown('3. c\n4. d\n   - e\n\n- [ ] todo\n- [x] done', CANONICAL)).toBe('3. c\n4. d\n  • e\n\n• [ ] todo\n• [x] done');
  });

  it('writes headings strong, quotes with >, rules and hard breaks by default', () => {
    expect(renderMarkdown('# Title\n> quoted\n> more\n\n---\nline  \nbreak', TAGGED)).toBe(
      '<b>Title</b>\n&#62; quoted\n&#62; more\n\n———\nline\nbreak',
    );
  });

  it('lets a dialect draw list items and tables itself', () => {
    const native: MarkdownDialect = {
      ...CANONICAL,
      listItem: (content, item) => `${'    '.repeat(item.depth)}${item.ordered ? `${item.number})` : '-'} ${content}`,
      table: ({ header, rows }) => [header, ...rows].map((row) => row.map((cell) => cell.written).join(',')).join(';'),
    };
    expect(renderMarkdown('- a\n  - b\n\n| x | **y** |\n|---|---|\n| 1 | 2 |', native)).toBe('- a\n    - b\n\nx,y;1,2');
  });

  it('takes a half-written stream without throwing: unclosed emphasis stays text, an open fence is code', () => {
    expect(renderMarkdown('so **bold and', TAGGED)).toBe('so **bold and');
    expect(renderMarkdown('look:\n```js\nconst a', TAGGED)).toBe('look:\n<pre js>const a</pre>');
    expect(renderMarkdown('', TAGGED)).toBe('');
  });

  it('shows autolinks and images as links', () => {
    expect(renderMarkdown('see https://x.test/a?b=1 and ![logo](https://x.test/l.png)', TAGGED)).toBe(
      'see <a https://x.test/a?b=1>https://x.test/a?b=1</a> and <a https://x.test/l.png>logo</a>',
    );
  });
});

describe('alignedTable', () => {
  it('pads every column to its widest cell, counting an emoji or a CJK character once', () => {
    expect(alignedTable(['a', 'bb'], [['你好', '🚀'], ['long cell']])).toBe(
      ['| a         | bb  |', '| --------- | --- |', '| 你好        | 🚀   |', '| long cell |     |'].join('\n'),
    );
  });
});

describe('PLAIN_TEXT_DIALECT', () => {
  it('shows a link as its label and its url, and an autolink once', () => {
    expect(renderMarkdown('[docs](https://d.test) or https://d.test', PLAIN_TEXT_DIALECT)).toBe('docs (https://d.test) or https://d.test');
    expect(renderMarkdown('write to ana@example.com', PLAIN_TEXT_DIALECT)).toBe('write to ana@example.com');
  });
});
