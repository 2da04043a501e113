import { describe, expect, it } from 'vitest';
import { discordParts, renderWithin } from '../../../../channels/discord/parts.js';
import { escapeDiscordText, renderDiscord } from '../../../../channels/discord/render.js';
import { PLAIN_TEXT_DIALECT, renderMarkdown } from '../../../../src/channel/markdown.js';
import { displayOf } from '../../../fakes/discord/display.js';
import { CORE_TEXTS } from '../core-texts.js';

/** What Discord's client shows (the fake's display model, written from Discord's docs, not from this renderer). */
const shownBy = (content: string) => displayOf(content, { users: new Map(), roles: new Map(), channels: new Map() });
/** The round-trip table's canonical form of the Markdown (a quote shows its text, as the display model reduces it). */
const canonical = (markdown: string) => renderMarkdown(markdown, { ...PLAIN_TEXT_DIALECT, link: (label) => label, blockquote: (inner) => inner });

describe('renderDiscord', () => {
  it.each([
    ['**b** *i* _i_ ~~s~~ `c`', '**b** *i* *i* ~~s~~ `c`'],
    ['# One\n## Two\n#### Four', '# One\n## Two\n### Four'],
    ['- a\n  - b\n\n3. c\n4. d', '- a\n  - b\n\n3. c\n4. d'],
    ['> quoted\n> > nested', '> quoted\n> nested'],
    ['[docs](https://d.test/a_b) and https://d.test', '[docs](<https://d.test/a_b>) and <https://d.test>'],
    ['[mail](mailto:a@b.test)', 'mail (mailto:a@b.test)'],
    ['```js\nconst a = 1;\n```', '```js\nconst a = 1;\n```'],
    ['```my lang\nx\n```', '```\nx\n```'],
    ['`` a ` b ``', '``a ` b``'],
    ['``` `` ```', '``` `` ```'],
    ['a_b * c | d ~ e ` f \\ g [h]', 'a\\_b \\* c \\| d \\~ e \\` f \\\\ g \\[h\\]'],
    ['\\- not a list\n\n\\# not a heading\n\n\\> not a quote\n\n1\\. not a list', '\\- not a list\n\n\\# not a heading\n\n\\> not a quote\n\n1\\. not a list'],
    ['<@123> <#4> <:e:5> <t:6> </c:7> <https://x.test> <b> </b> <#x>', '\\<@123> \\<#4> \\<:e:5> \\<t:6> \\</c:7> <https://x.test> <b> </b> <#x>'],
    ['| a | b |\n|---|---|\n| 1 | 2 |', '```\n| a   | b   |\n| --- | --- |\n| 1   | 2   |\n```'],
  ])('%j → %j', (markdown, content) => {
    expect(renderDiscord(markdown)).toBe(content);
  });

  // Each shows, on Discord, exactly the canonical form of the Markdown: one level of escaping.
  it.each([
    'snake_case and __init__ and *args, **kwargs',
    'a ~~b~~ ~c~ ||spoiler|| x|y',
    '- item with `code | pipe`\n- **bold _nested_** end',
    '1. one\n2. two\n   - three',
    'C:\\Users\\me and \\\\server',
    '# Title with `code`\n\n> a quote with *style*',
    'see <@everyone> @everyone <#general> :smile:',
    '```\nconst a = "```";\n```',
    '[a *styled* label](https://x.test/p?q=(1)) then text',
    ':x_y\\<@1> and \\<t:5>', // escaped in the Markdown, so `<` reaches the dialect apart from the rest
    'so **bold and', // half-written
    'look:\n```js\nconst a', // half a fence
  ])('%j shows as written', (markdown) => {
    expect(shownBy(renderDiscord(markdown)).shown).toBe(canonical(markdown).replaceAll('```', '`\u200b``'));
  });

  it("shows core's own texts, which come through a reply as Markdown, as written", () => {
    expect(CORE_TEXTS.filter(([markdown, shown]) => shownBy(renderDiscord(markdown)).shown !== shown)).toEqual([]);
  });

  it('escapes plain text so it shows as written', () => {
    const text = '- 1. > # *a* _b_ `c` ~~d~~ ||e|| <@1> \\';
    expect(shownBy(escapeDiscordText(text)).shown).toBe(text);
  });
});

describe('discordParts', () => {
  it('keeps whole blocks together while they fit, each part within the limit', () => {
    const paragraph = 'word '.repeat(60).trim();
    const parts = discordParts(Array.from({ length: 12 }, () => paragraph).join('\n\n'), 2000);
    expect(parts.map((part) => renderDiscord(part).length).every((length) => length <= 2000)).toBe(true);
    expect(parts.flatMap((part) => renderDiscord(part).split('\n\n'))).toEqual(Array.from({ length: 12 }, () => paragraph));
  });

  it('never cuts inside a style or a link, and a cut never starts a block', () => {
    const text = `${'x '.repeat(980)}**bold words here** - [a link](https://x.test) > ${'y '.repeat(980)}`;
    const parts = discordParts(text, 2000);
    expect(parts.length).toBeGreaterThan(1);
    const shown = parts.map((part) => shownBy(renderDiscord(part)));
    expect(shown.map((s) => s.shown).join('')).toBe(canonical(text));
    expect(shown.flatMap((s) => s.links)).toEqual([{ text: 'a link', url: 'https://x.test' }]);
  });

  it('keeps counting an ordered list across parts, as Markdown numbers it', () => {
    const items = Array.from({ length: 150 }, (_, i) => `1. step number ${i + 1} of the plan`);
    const parts = discordParts(`3. start\n${items.join('\n')}`, 2000);
    expect(parts.length).toBeGreaterThan(1);
    const numbers = parts.flatMap((part) => shownBy(renderDiscord(part)).shown.split('\n')).map((line) => Number(line.split('.')[0]));
    expect(numbers).toEqual(Array.from({ length: 151 }, (_, i) => i + 3));
  });

  it('repeats a table header in every part', () => {
    const rows = Array.from({ length: 120 }, (_, i) => `| row ${i} | ${i * i} |`);
    const parts = discordParts(`| name | square |\n|---|---|\n${rows.join('\n')}`, 2000);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(shownBy(renderDiscord(part)).shown.split('\n')[0]).toMatch(/^\| name +\| square \|$/);
  });

  it('gives nothing for blank text, and one part for text that renders to nothing', () => {
    expect(discordParts('  \n\n', 2000)).toEqual([]);
    expect(discordParts('[docs]: https://d.test', 2000)).toEqual(['[docs]: https://d.test']);
  });
});

describe('renderWithin', () => {
  it('shows Markdown that renders to nothing as typed, since Discord refuses an empty message', () => {
    expect(shownBy(renderWithin('[docs]: https://d.test', 2000)).shown).toBe('[docs]: https://d.test');
  });

  it('shows the first part and an ellipsis when the whole does not fit', () => {
    const content = renderWithin(`**${'a '.repeat(1500)}**`, 2000);
    expect(content.length).toBeLessThanOrEqual(2000);
    expect(content.endsWith('…')).toBe(true);
  });
});
