import { describe, expect, it } from 'vitest';
import { mrkdwnText, renderMarkdownText, renderMrkdwn, renderStreamingMarkdownText } from '../../../../channels/slack/render.js';
import { ROUND_TRIP_CASES } from '../../../contract/round-trip.js';
import { displayMarkdown, displayMrkdwn } from '../../../fakes/slack/display.js';
import { CORE_TEXTS } from '../core-texts.js';

const ZWSP = '\u200b';

describe('renderMrkdwn', () => {
  it.each<[string, string, string]>([
    ['plain text', 'plain text', 'plain text'],
    ['control characters, once', 'A & B < C > D &amp;', 'A &amp; B &lt; C &gt; D &amp;amp;'],
    ['bold, italic, strike', '**bold**, *it* _also_ ~~gone~~', '*bold*, _it_ _also_ ~gone~'],
    ['nesting', '**bold _and italic_**', '*bold _and italic_*'],
    ['formatting on each line of a soft-broken paragraph', '**one\ntwo**', '*one*\n*two*'],
    ['a marker next to a letter gets a boundary', 'foo**bar**baz 你好**世界**', `foo${ZWSP}*bar*${ZWSP}baz 你好${ZWSP}*世界*`],
    ['markup characters that are not markup', 'snake_case, a * b, 2 * 3 * 4, x | y', 'snake_case, a * b, 2 * 3 * 4, x | y'],
    ['escaped Markdown markers as characters', '\\*not bold\\* \\_x\\_', '*not bold* _x_'],
    ['inline code, escaped', '`a < b && **c**`', '`a &lt; b &amp;&amp; **c**`'],
    ['inline code holding a backtick, as text', '`` a ` b ``', 'a ` b'],
    ['a code block, language dropped', '```ts\nif (a < b) { **x** }\n```', '```\nif (a &lt; b) { **x** }\n```'],
    ['three backticks inside code kept apart', '````\n```\n````', `\`\`\`\n\`\`${ZWSP}\`\n\`\`\``],
    ['a link', '[docs](https://x.dev/?a=1&b=2)', '<https://x.dev/?a=1&amp;b=2|docs>'],
    ['a link with markup in its label', '[**bold link**](https://x.dev)', '<https://x.dev|*bold link*>'],
    ['an autolink', 'see https://x.dev/a_b', 'see <https://x.dev/a_b>'],
    ['a relative link as text', '[notes](notes.md)', 'notes (notes.md)'],
    ['headings as bold lines', '# Title\n## Sub', '*Title*\n*Sub*'],
    ['lists as bullet lines', '- one\n  - two\n\n1. first', '• one\n  • two\n\n1. first'],
    ['a quote', '> quoted & **bold**', '> quoted &amp; *bold*'],
    ['raw HTML as text', '<b>x</b> <@U123> <!here>', '&lt;b&gt;x&lt;/b&gt; &lt;@U123&gt; &lt;!here&gt;'],
    ['a table as a monospace code block', '| a | b |\n|---|---|\n| 1 & 2 | 3 |', '```\n| a     | b   |\n| ----- | --- |\n| 1 &amp; 2 | 3   |\n```'],
    ['an unclosed bold while streaming, as characters', '**unclosed', '**unclosed'],
    ['half a code fence while streaming, closed', 'run:\n```sh\nls -la', 'run:\n```\nls -la\n```'],
    ['no stray placeholder characters', 'a\ue010b', 'ab'],
  ])('%s', (_name, markdown, mrkdwn) => {
    expect(renderMrkdwn(markdown)).toBe(mrkdwn);
  });

  it('shows every round-trip case as the table says, on the fake Slack', () => {
    for (const roundTrip of ROUND_TRIP_CASES) {
      const display = displayMrkdwn(renderMrkdwn(roundTrip.typed));
      expect([roundTrip.name, display.shown]).toEqual([roundTrip.name, roundTrip.shown]);
      if (roundTrip.links) expect(display.links).toEqual(roundTrip.links);
    }
  });
});

describe("core's own texts, sent as replies", () => {
  it('show as written once rendered like any answer', () => {
    expect(CORE_TEXTS.map(([markdown]) => displayMrkdwn(renderMrkdwn(markdown)).shown)).toEqual(CORE_TEXTS.map(([, shown]) => shown));
  });
});

describe('mrkdwnText', () => {
  it('shows server text as written', () => {
    const text = 'Use /<skill-name> <task> & *stars* stay';
    expect(mrkdwnText(text)).toBe('Use /&lt;skill-name&gt; &lt;task&gt; &amp; *stars* stay');
  });
});

describe('renderMarkdownText', () => {
  it.each<[string, string, string]>([
    ['text with markup characters, backslash-escaped', 'a * b & <c> | d_e ~ `', 'a \\* b \\& \\<c\\> \\| d\\_e \\~ \\`'],
    ['formatting', '**bold** _it_ ~~gone~~', '**bold** *it* ~~gone~~'],
    ['inline code with a backtick', '`` a ` b ``', '``a ` b``'],
    ['inline code starting with a backtick', '`` `a ``', '`` `a ``'],
    ['a code block, language dropped', '```js\nconst s = `x`;\n```', '```\nconst s = `x`;\n```'],
    ['a link', '[the docs](https://x.dev/a_b?x=1&y=2)', '[the docs](https://x.dev/a_b?x=1&y=2)'],
    ['headings', '## Sub', '## Sub'],
    ['nested lists', '- a\n  - b\n\n1. one', '- a\n    - b\n\n1. one'],
    ['a table as a monospace code block', '| a | b |\n|---|---|\n| 1 | 2 |', '```\n| a   | b   |\n| --- | --- |\n| 1   | 2   |\n```'],
  ])('%s', (_name, markdown, written) => {
    expect(renderMarkdownText(markdown)).toBe(written);
  });

  it('shows every round-trip case as the table says, on the fake Slack', () => {
    for (const roundTrip of ROUND_TRIP_CASES) {
      const display = displayMarkdown(renderMarkdownText(roundTrip.typed));
      expect([roundTrip.name, display.shown]).toEqual([roundTrip.name, roundTrip.shown]);
      if (roundTrip.links) expect(display.links).toEqual(roundTrip.links);
    }
  });
});

describe('renderStreamingMarkdownText', () => {
  it.each<[string, string, string]>([
    ['plain prose as it grows', 'the answer is 42 & more', 'the answer is 42 \\& more'],
    ['an unclosed bold waits', 'first.\n\nthis is **bo', 'first.'],
    ['half a code fence waits', 'run:\n\n```sh\nls', 'run:'],
    ['a list item that may still grow waits', 'intro\n\n- one\n- tw', 'intro'],
    ['nothing yet', '**bo', ''],
    ['what may become a list waits', 'intro\n\n1', 'intro'],
  ])('%s', (_name, partial, shown) => {
    expect(renderStreamingMarkdownText(partial)).toBe(shown);
  });

  it('only grows while a partial grows', () => {
    const final = 'Intro & setup.\n\n**Steps**\n\n1. install `npm i`\n2. run it\n\n```sh\nnpm test\n```\n\nDone.';
    let shown = '';
    for (let end = 1; end <= final.length; end++) {
      const next = renderStreamingMarkdownText(final.slice(0, end));
      expect(next.startsWith(shown)).toBe(true);
      shown = next;
    }
    expect(displayMarkdown(shown).shown).toBe('Intro & setup.\n\nSteps\n\n1. install npm i\n2. run it\n\nnpm test\n\nDone.');
  });
});
