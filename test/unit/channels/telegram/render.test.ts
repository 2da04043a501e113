import { describe, expect, it } from 'vitest';
import { renderTelegramMessage, renderWithinOneMessage, splitTelegramMarkdown } from '../../../../channels/telegram/render.js';
import { MESSAGES } from '../../../../src/manager/messages.js';
import { SCHEDULE_MESSAGES } from '../../../../src/schedules/messages.js';
import { WHEN_MESSAGES } from '../../../../src/schedules/when.js';
import { parseHtml } from '../../../fakes/telegram/parse-mode.js';
import { CORE_TEXTS } from '../core-texts.js';

/** What Telegram would hold after parsing the HTML: the fake's parser referees the renderer. */
function shown(markdown: string) {
  return parseHtml(renderTelegramMessage(markdown).html);
}

describe('renderTelegramMessage: the agent’s Markdown in parse mode HTML, escaped once', () => {
  it.each([
    ['1 < 2 && 3 > 2', '1 &lt; 2 &amp;&amp; 3 &gt; 2'],
    ['&amp; stays as typed', '&amp;amp; stays as typed'],
    ['<b>not bold</b>', '&lt;b&gt;not bold&lt;/b&gt;'],
    ['**bold** _it_ ~~gone~~ `a<b`', '<b>bold</b> <i>it</i> <s>gone</s> <code>a&lt;b</code>'],
    ['[docs](https://e.com/?a=1&b="2")', '<a href="https://e.com/?a=1&amp;b=&quot;2&quot;">docs</a>'],
    ['[notes](./notes.md)', 'notes (./notes.md)'],
    ['[](https://e.com/)', '<a href="https://e.com/">https://e.com/</a>'],
    ['[docs]: https://e.com/', '[docs]: https://e.com/'],
    ['```py\nif a < b:\n```', '<pre><code class="language-py">if a &lt; b:</code></pre>'],
    ['```"><script>\nx\n```', '<pre>x</pre>'],
    ['# Title', '<b>Title</b>'],
    ['> quoted\n> > deeper', '<blockquote>quoted\n&gt; deeper</blockquote>'],
    ['> a\n>\n> > b\n> > c', '<blockquote>a\n\n&gt; b\n&gt; c</blockquote>'],
    ['- a\n  1. b', '• a\n  1. b'],
  ])('%j → %j', (markdown, html) => {
    expect(renderTelegramMessage(markdown).html).toBe(html);
  });

  it('writes a table as aligned rows in a <pre> block (Telegram has no tables)', () => {
    const table = '| a         | b   |\n| --------- | --- |\n| long cell | 1   |';
    expect(shown('| a | b |\n|---|---|\n| long cell | 1 |')).toEqual({ text: table, entities: [{ type: 'pre', offset: 0, length: table.length }] });
  });

  it('gives the plain text Telegram would show, for sending unformatted', () => {
    const markdown = '**a** & [b](https://b.test/) `<c>`';
    expect(renderTelegramMessage(markdown).plainText).toBe(shown(markdown).text);
    expect(renderTelegramMessage(markdown).plainText).toBe('a & b <c>');
  });

  it('shows every text the server itself writes as written, a `quoted` command in monospace', () => {
    const fixed = [SCHEDULE_MESSAGES, WHEN_MESSAGES].flatMap((messages) => Object.values(messages).filter((text) => typeof text === 'string'));
    const asShown = (text: string) => text.replace(/`([^`]+)`/g, '$1');
    const texts: (readonly [string, string])[] = [
      ...CORE_TEXTS,
      ...fixed.map((text) => [text, asShown(text)] as const),
      [MESSAGES.skillDisabled('data-analysis'), 'Skill /data-analysis is installed but disabled. Enable it before using slash activation.'],
      [SCHEDULE_MESSAGES.listLine('ab12cd', 'every 2 hours', 'paused', 'check <services> & report'), '• ab12cd — every 2 hours — paused — check <services> & report'],
      [WHEN_MESSAGES.invalidCron('0 9 * `*', 'four fields'), '0 9 * `* is not a valid cron expression (four fields). Use five fields, minute hour day-of-month month day-of-week, like 0 9 * * 1-5.'],
    ];
    expect(texts.map(([markdown]) => shown(markdown).text)).toEqual(texts.map(([, text]) => text));
  });

  it('shows what a person wrote, quoted inside a server text, as written: their stars are not emphasis', () => {
    const text = SCHEDULE_MESSAGES.listLine('ab12cd', 'every 2 hours', 'paused', 'check *all* services_now');
    expect(shown(text)).toEqual({ text: '• ab12cd — every 2 hours — paused — check *all* services_now', entities: [] });
    expect(shown(MESSAGES.goal('**ship** [v2](x) `now`')).text).toBe('Goal: **ship** [v2](x) `now`');
  });
});

describe('renderWithinOneMessage: a half-written stream is never broken markup, a long one is cut', () => {
  it.each([
    ['**bold and', '**bold and'],
    ['```js\nconst a = 1 <', 'const a = 1 <'],
    ['[label](https://exa', '[label](https://exa'],
    ['1. one\n2.', '1. one\n2. '],
  ])('%j shows %j', (markdown, text) => {
    expect(parseHtml(renderWithinOneMessage(markdown).html).text).toBe(text);
  });

  it('cuts a partial longer than a message to its first part and an ellipsis', () => {
    const partial = renderWithinOneMessage(`${'a'.repeat(3000)}\n\n${'b'.repeat(3000)}`);
    expect(parseHtml(partial.html).text).toBe(`${'a'.repeat(3000)}…`);
  });
});

describe('splitTelegramMarkdown: parts that each render within 4096 characters', () => {
  const sizes = (parts: string[]) => parts.map((part) => shown(part).text.length);

  it('keeps a text that fits whole, and gives nothing for a blank one', () => {
    expect(splitTelegramMarkdown('hello **world**')).toEqual(['hello **world**']);
    expect(splitTelegramMarkdown(' \n\n ')).toEqual([]);
  });

  it('fills each message before starting the next, cutting a long line hard', () => {
    const text = 'x'.repeat(10_240);
    const parts = splitTelegramMarkdown(text);
    expect(sizes(parts)).toEqual([4096, 4096, 2048]);
    expect(parts.join('')).toBe(text);
  });

  it('counts what Telegram shows, not the Markdown: long link targets do not cut a text that fits', () => {
    const text = Array.from({ length: 40 }, (_, i) => `[${i}](https://example.com/${'p'.repeat(200)})`).join(' ');
    expect(text.length).toBeGreaterThan(4096);
    expect(splitTelegramMarkdown(text)).toEqual([text]);
  });

  it('ends parts between blocks where it can', () => {
    const paragraphs = ['a', 'b', 'c'].map((letter) => letter.repeat(1500));
    const parts = splitTelegramMarkdown(paragraphs.join('\n\n'));
    expect(parts.map((part) => shown(part).text)).toEqual([`${paragraphs[0]}\n\n${paragraphs[1]}`, paragraphs[2]]);
  });

  it('cuts a long code block between lines and fences every piece again, so each part shows code', () => {
    const lines = Array.from({ length: 500 }, (_, i) => `line ${i} && x < y`);
    const parts = splitTelegramMarkdown(`before\n\n\`\`\`sh\n${lines.join('\n')}\n\`\`\`\n\nafter`);
    const texts = parts.map((part) => shown(part));
    expect(texts.every((t) => t.text.length <= 4096)).toBe(true);
    // The paragraph before shares the first part with the code's first lines.
    expect(texts.map((t) => t.entities.filter((e) => e.type === 'pre').length)).toEqual([1, 1, 1]);
    expect(texts[0]?.text.startsWith('before\n\n')).toBe(true);
    expect(texts.at(-1)?.text.endsWith('\n\nafter')).toBe(true);
    const code = texts.map((t) => t.text.replace(/^before\n\n/, '').replace(/\n\nafter$/, ''));
    expect(code.join('\n')).toBe(lines.join('\n'));
  });

  it('fences a cut code block with more backticks than the code holds, so code with ``` stays code', () => {
    const lines = Array.from({ length: 400 }, (_, i) => (i % 50 === 0 ? '```' : `line ${i} of the sample`));
    const parts = splitTelegramMarkdown(`\`\`\`\`md\n${lines.join('\n')}\n\`\`\`\``);
    expect(parts.length).toBeGreaterThan(1);
    const texts = parts.map((part) => shown(part));
    expect(texts.filter((t) => t.entities.length !== 1 || t.entities[0]?.length !== t.text.length)).toEqual([]);
    expect(texts.map((t) => t.text).join('\n')).toBe(lines.join('\n'));
  });

  it('cuts a long table between rows, with the header in every part', () => {
    const rows = Array.from({ length: 300 }, (_, i) => `| item ${i} | ${i * 7} |`);
    const parts = splitTelegramMarkdown(`| name | qty |\n|---|---|\n${rows.join('\n')}`);
    expect(parts.length).toBeGreaterThan(1);
    const texts = parts.map((part) => shown(part));
    expect(texts.filter((t) => t.text.length > 4096)).toEqual([]);
    // Each part is a table of its own: a header, its rule, then rows, all in one <pre>.
    expect(texts.filter((t) => !/^\| name +\| qty +\|\n\| -+ \| -+ \|\n\| item /.test(t.text))).toEqual([]);
    expect(texts.filter((t) => t.entities[0]?.type !== 'pre' || t.entities[0].length !== t.text.length)).toEqual([]);
    const shownRows = texts.flatMap((t) => t.text.split('\n').slice(2)).map((row) => row.replace(/ +/g, ' '));
    expect(shownRows).toEqual(rows);
  });
});
