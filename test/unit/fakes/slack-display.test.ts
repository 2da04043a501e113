import { describe, expect, it } from 'vitest';
import { composedText } from '../../fakes/slack/composer.js';
import { displayMarkdown, displayMrkdwn } from '../../fakes/slack/display.js';

/** The fake Slack's display model, with examples from Slack's formatting pages. */
describe('the fake Slack shows mrkdwn as Slack does (docs.slack.dev/messaging/formatting-message-text)', () => {
  const names = (id: string) => (id === 'U024BE7LH' ? 'bob' : undefined);

  it.each<[string, string, string]>([
    ['bold, italic, strike-through, inline code', '*bold* _italic_ ~strike~ `code`', 'bold italic strike code'],
    ['nested formatting', '*_both_*', 'both'],
    ['a code block without its fence', '```multiline code\n2 lines!```', 'multiline code\n2 lines!'],
    ['a fence with newlines after and before the backticks', 'run:\n```\nx < y\n```\ndone', 'run:\nx < y\ndone'],
    ['formatting inside code stays', '`*not bold*` ```_nor italic_```', '*not bold* _nor italic_'],
    ['the three entities, decoded once', 'A &amp; B &lt;b&gt; &amp;lt; &#39;', 'A & B <b> &lt; &#39;'],
    ['a quote', '> quoted *text*\n&gt; not a quote', '> quoted text\n> not a quote'],
    ['a labelled user mention', '<@U024BE7LH|bobby> hi', '@bobby hi'],
    ['a user mention by id', '<@U024BE7LH> and <@U0NOBODY>', '@bob and @U0NOBODY'],
    ['channels and special mentions', '<#C024BE7LR|general> <#C024BE7LR> <!here> <!channel> <!subteam^SAZ94GDB8|@team>', '#general #C024BE7LR @here @channel @team'],
    ['markers without word boundaries stay literal', 'snake_case_name a * b = c a*b*c ~tilde~ver', 'snake_case_name a * b = c a*b*c ~tilde~ver'],
    ['emphasis inside words of CJK text does not render', '你好*世界*吗', '你好*世界*吗'],
    ['formatting does not cross a line', '*one\ntwo*', '*one\ntwo*'],
    ['an unclosed marker or a lone < stays', '*open and 1 < 2', '*open and 1 < 2'],
  ])('%s', (_name, mrkdwn, shown) => {
    expect(displayMrkdwn(mrkdwn, names).shown).toBe(shown);
  });

  it('shows a link by its label and records where it points', () => {
    expect(displayMrkdwn('<http://www.example.com|This message *is* a link> and <https://x.dev/?a=1&amp;b=2> <mailto:bob@example.com|Email Bob>')).toEqual({
      shown: 'This message is a link and https://x.dev/?a=1&b=2 Email Bob',
      links: [
        { text: 'This message is a link', url: 'http://www.example.com' },
        { text: 'https://x.dev/?a=1&b=2', url: 'https://x.dev/?a=1&b=2' },
        { text: 'Email Bob', url: 'mailto:bob@example.com' },
      ],
    });
  });

  it('loses an unescaped angle bracket, as Slack parses it as a control sequence', () => {
    expect(displayMrkdwn('<b>not bold</b>').shown).not.toBe('<b>not bold</b>');
  });
});

describe('the fake Slack shows markdown_text as the markdown block does (docs.slack.dev/reference/block-kit/blocks/markdown-block)', () => {
  it.each<[string, string, string]>([
    ['bold and italic', '**this is bold** or __this is bold__, *italicized* and _italicized_', 'this is bold or this is bold, italicized and italicized'],
    ['bold and nested italic', '**this text is _extremely_ important**', 'this text is extremely important'],
    ['strike-through and inline code', '~~gone~~ `this is my code`', 'gone this is my code'],
    ['headers', '# Header 1\n## Header 2', 'Header 1\nHeader 2'],
    ['a quote', '> this is a block quote', '> this is a block quote'],
    ['a code block, its language dropped', '```python\nprint("hello")\n```', 'print("hello")'],
    ['escaping special characters', '\\*This is special text\\* \\<b\\> \\&amp;', '*This is special text* <b> &amp;'],
    ['character references', '&lt;b&gt; &amp; &#35;', '<b> & #'],
    ['lists', '- first item\n  - nested\n\n1. first\n2. second', '• first item\n  • nested\n\n1. first\n2. second'],
    ['a table shows as typed (tables are not supported)', '| a | b |\n|---|---|\n| 1 | 2 |', '| a | b |\n|---|---|\n| 1 | 2 |'],
  ])('%s', (_name, markdown, shown) => {
    expect(displayMarkdown(markdown).shown).toBe(shown);
  });

  it('shows links and images as link text', () => {
    expect(displayMarkdown('[my text](https://www.google.com) ![Logo](https://x.dev/logo.png)')).toEqual({
      shown: 'my text Logo',
      links: [
        { text: 'my text', url: 'https://www.google.com' },
        { text: 'Logo', url: 'https://x.dev/logo.png' },
      ],
    });
  });

  it('hides raw HTML, so unescaped markup is caught', () => {
    expect(displayMarkdown('a <b>b</b> c').shown).toBe('a b c');
  });
});

describe("the fake Slack's composer encodes what a person types as Slack's client does", () => {
  it.each<[string, string, string]>([
    ['control characters as entities', 'compare 1 < 2 && 3 > 2', 'compare 1 &lt; 2 &amp;&amp; 3 &gt; 2'],
    ['entities typed literally, encoded again', 'Tom &amp; Jerry', 'Tom &amp;amp; Jerry'],
    ['a typed URL, linked', 'see https://x.dev/?a=1&b=2.', 'see <https://x.dev/?a=1&amp;b=2>.'],
    ['picked mentions and links, as they are', '<@U1> <#C1|general> <!here> <https://x.dev|docs> <b>', '<@U1> <#C1|general> <!here> <https://x.dev|docs> &lt;b&gt;'],
  ])('%s', (_name, typed, text) => {
    expect(composedText(typed)).toBe(text);
  });
});
