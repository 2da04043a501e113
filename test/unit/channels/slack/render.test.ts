import { describe, expect, it } from 'vitest';
import { escapeMrkdwn, markdownToMrkdwn } from '../../../../channels/slack/render.js';

describe('markdownToMrkdwn', () => {
  it.each<[string, string]>([
    ['plain text', 'plain text'],
    ['A & B < C > D', 'A &amp; B &lt; C &gt; D'],
    ['> a quote\n>> deeper', '> a quote\n>&gt; deeper'],
    ['**bold** and __also__', '*bold* and *also*'],
    ['*italic* and _kept_', '_italic_ and _kept_'],
    ['~~gone~~', '~gone~'],
    ['2 * 3 * 4 and a*b*c', '2 * 3 * 4 and a*b*c'],
    ['# Title\n## Sub', '*Title*\n*Sub*'],
    ['- one\n* two\n  + three', '• one\n• two\n  • three'],
    ['[docs](https://x.dev/?a=1&b=2)', '<https://x.dev/?a=1&amp;b=2|docs>'],
    ['[**bold link**](https://x.dev)', '<https://x.dev|*bold link*>'],
    ['`a < b && **c**`', '`a &lt; b &amp;&amp; **c**`'],
    ['```ts\nif (a < b) { **x** }\n```', '```if (a &lt; b) { **x** }\n```'],
    ['**unclosed while streaming', '**unclosed while streaming'],
    ['<@U123> hi', '&lt;@U123&gt; hi'],
  ])('%j → %j', (markdown, mrkdwn) => {
    expect(markdownToMrkdwn(markdown)).toBe(mrkdwn);
  });

  it('never leaves an unescaped < or & outside what it generated', () => {
    const out = markdownToMrkdwn('x < y & z [a](https://a.b) `<`');
    expect(out.replace('<https://a.b|a>', '')).not.toMatch(/<|&(?!amp;|lt;|gt;)/);
  });
});

describe('escapeMrkdwn', () => {
  it('escapes every control character unless quotes are kept', () => {
    expect(escapeMrkdwn('> a & <b>')).toBe('&gt; a &amp; &lt;b&gt;');
    expect(escapeMrkdwn('> a & <b>', true)).toBe('> a &amp; &lt;b&gt;');
  });
});
