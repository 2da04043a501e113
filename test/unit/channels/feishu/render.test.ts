import { describe, expect, it } from 'vitest';
import { escapeCardText, renderCardMarkdown, withSourcePreview } from '../../../../channels/feishu/render.js';
import { openCodeFence } from '../../../../src/channel/markdown.js';
import { ROUND_TRIP_CASES } from '../../../contract/round-trip.js';
import { displayCardMarkdown } from '../../../fakes/feishu/display.js';
import { CORE_TEXTS } from '../core-texts.js';

describe('renderCardMarkdown', () => {
  it.each([
    ['HTML and references as text', '<b>x</b> &amp; <at id=ou_1></at>', '&lt;b&gt;x&lt;/b&gt; &amp;amp; &lt;at id=ou&#95;1&gt;&lt;/at&gt;'],
    ['markup characters as references', 'a * b_c ~d `e [f] | g \\', 'a &#42; b&#95;c &#126;d &#96;e &#91;f&#93; &#124; g &#92;'],
    ['line-leading list, heading and number markers', '\\- x\n\\# y\n2\\. z', '&#45; x\n&#35; y\n2&#46; z'],
    ['an emoji shortcode as text', 'ratio 3:2, status :OK: at 10:30', 'ratio 3:2, status &#58;OK: at 10:30'],
    ['emphasis, strike and code', '**b** _i_ ~~s~~ `a && b`', '**b** *i* ~~s~~ `a && b`'],
    ['inline code with backticks', '``a ` b``', '``a ` b``'],
    ['an http link, raw url', '[docs](https://x.example/a_(b)?q=1&r=2)', '[docs](https://x.example/a_%28b%29?q=1&r=2)'],
    ['a link Feishu would refuse, as text', '[mail me](mailto:a@b.example)', 'mail me (mailto:a@b.example)'],
    ['a code block, raw', '```sh\nx && y > z\n```', '```sh\nx && y > z\n```'],
    ['a code block holding a fence', '````md\n```\ninner\n```\n````', '````md\n```\ninner\n```\n````'],
    ['nested lists, four spaces a level', '- a\n  - b\n1. c', '- a\n    - b\n1. c'],
    ['a quote', '> said <this>', '> said &lt;this&gt;'],
    ['a table with escaped cells', '| a | b |\n|---|---|\n| x \\| y | <z> |', '| a | b |\n|---|---|\n| x &#124; y | &lt;z&gt; |'],
  ])('%s', (_name, markdown, card) => {
    expect(renderCardMarkdown(markdown)).toBe(card);
  });

  for (const roundTrip of ROUND_TRIP_CASES) {
    it(`shows ${roundTrip.name} as the round-trip table says, never pinging anyone`, () => {
      const display = displayCardMarkdown(renderCardMarkdown(roundTrip.typed));
      expect(display.shown).toBe(roundTrip.shown);
      expect(display.mentions).toEqual([]);
    });
  }

  it('never turns an echoed mention tag into a ping', () => {
    const display = displayCardMarkdown(renderCardMarkdown('<at id=ou_x></at> <at id=all></at> and <at user_id="ou_y">Y</at>'));
    expect(display).toMatchObject({ shown: '<at id=ou_x></at> <at id=all></at> and <at user_id="ou_y">Y</at>', mentions: [] });
  });

  it('renders every prefix of a reply (a streaming partial) without throwing or leaving a fence open', () => {
    const reply = 'Say **bold and `code <x>`** then:\n\n```js\nconst a = `b` && c;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |';
    for (let end = 1; end <= reply.length; end++) {
      const card = renderCardMarkdown(`${reply.slice(0, end)}…`);
      expect(openCodeFence(card)).toBeUndefined();
      expect(displayCardMarkdown(card).mentions).toEqual([]);
    }
  });
});

describe('escapeCardText and withSourcePreview', () => {
  it('show server text and the quoted preview as written', () => {
    expect(displayCardMarkdown(escapeCardText('⏳ *Working* on <it>...')).shown).toBe('⏳ *Working* on <it>...');
    expect(withSourcePreview('The answer.', 'what is\n**x** < y?')).toBe('> what is\n> &#42;&#42;x&#42;&#42; &lt; y?\n\nThe answer.');
  });
});

describe("core's own messages", () => {
  // Rendered as Markdown like the agent's text: each must show as a person reads it.
  const show = (card: string) => displayCardMarkdown(card).shown;
  const render = renderCardMarkdown;
  it.each(CORE_TEXTS)('%s', (markdown, shown) => {
    expect(show(render(markdown))).toBe(shown);
  });
});
