import { describe, expect, it } from 'vitest';
import { escapeDingTalkText, renderDingTalkMarkdown } from '../../../../channels/dingtalk/render.js';
import { openCodeFence } from '../../../../src/channel/markdown.js';
import { ROUND_TRIP_CASES } from '../../../contract/round-trip.js';
import { displayMessage } from '../../../fakes/dingtalk/display.js';
import { CORE_TEXTS } from '../core-texts.js';

describe('renderDingTalkMarkdown', () => {
  it.each([
    ['HTML and references as text', '<b>x</b> &amp;', '&lt;b&gt;x&lt;/b&gt; &amp;amp;'],
    ['markup characters as references', 'a * b_c ~d `e [f] | g \\', 'a &#42; b&#95;c &#126;d &#96;e &#91;f&#93; &#124; g &#92;'],
    ['line-leading markers', '\\- x\n\\# y\n2\\. z', '&#45; x  \n&#35; y  \n2&#46; z'],
    ['a newline in a paragraph as a hard break', 'one\ntwo', 'one  \ntwo'],
    ['bold and italic as DingTalk writes them', '**b** _i_', '**b** *i*'],
    ['inline code, which DingTalk does not draw, as bold', 'run `a && b` now', 'run **a &amp;&amp; b** now'],
    ['strike-through as its text', '~~gone~~', 'gone'],
    ['a link, raw url', '[docs](https://x.example/a_b?q=1&r=2)', '[docs](https://x.example/a_b?q=1&r=2)'],
    ['a code block fenced, HTML escaped', '```html\n<p>a && b</p>\n```', '```html\n&lt;p&gt;a &amp;&amp; b&lt;/p&gt;\n```'],
    ['a table as aligned code', '| a | b |\n|---|---|\n| x | <y> |', '```\n| a   | b   |\n| --- | --- |\n| x   | &lt;y&gt; |\n```'],
    ['nested lists, four spaces a level', '- a\n  - b\n\n1. c', '- a\n    - b\n\n1. c'],
    ['a quote', '> said <this>', '> said &lt;this&gt;'],
  ])('%s', (_name, markdown, written) => {
    expect(renderDingTalkMarkdown(markdown)).toBe(written);
  });

  for (const roundTrip of ROUND_TRIP_CASES) {
    it(`shows ${roundTrip.name} as the round-trip table says`, () => {
      const display = displayMessage('markdown', renderDingTalkMarkdown(roundTrip.typed));
      expect(display.shown).toBe(roundTrip.shown);
      expect(display.links).toEqual(roundTrip.links ?? []);
    });
  }

  it('renders every prefix of a reply (a streaming partial) without throwing or leaving a fence open', () => {
    const reply = 'Say **bold and `code <x>`** then:\n\n```js\nconst a = `b` && c;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |';
    for (let end = 1; end <= reply.length; end++) {
      expect(openCodeFence(renderDingTalkMarkdown(`${reply.slice(0, end)}…`))).toBeUndefined();
    }
  });

  it('writes server text so it shows as written', () => {
    expect(displayMessage('card', escapeDingTalkText('⏳ *Working* on <it>...\nnext')).shown).toBe('⏳ *Working* on <it>...\nnext');
  });
});

describe("core's own messages", () => {
  // Rendered as Markdown like the agent's text: each must show as a person reads it.
  const show = (markdown: string) => displayMessage('markdown', markdown).shown;
  const render = renderDingTalkMarkdown;
  it.each(CORE_TEXTS)('%s', (markdown, shown) => {
    expect(show(render(markdown))).toBe(shown);
  });
});
