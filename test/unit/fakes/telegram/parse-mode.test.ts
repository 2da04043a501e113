import { describe, expect, it } from 'vitest';
import { displayOf } from '../../../fakes/telegram/display.js';
import { formattedTextOf, parseHtml, parseMarkdownV2 } from '../../../fakes/telegram/parse-mode.js';

/** The examples are those of https://core.telegram.org/bots/api#formatting-options. */

const cantParse = (reason: string) => expect.objectContaining({ errorCode: 400, description: `Bad Request: can't parse entities: ${reason}` });

function failureOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the markup to be refused');
}

describe('the fake Telegram parses parse_mode HTML as the Bot API documents it', () => {
  it('turns the documented tags into entities over the plain text', () => {
    expect(parseHtml('<b>bold</b>, <strong>bold</strong> <i>italic</i> <s>strike</s> <tg-spoiler>spoiler</tg-spoiler>')).toEqual({
      text: 'bold, bold italic strike spoiler',
      entities: [
        { type: 'bold', offset: 0, length: 4 },
        { type: 'bold', offset: 6, length: 4 },
        { type: 'italic', offset: 11, length: 6 },
        { type: 'strikethrough', offset: 18, length: 6 },
        { type: 'spoiler', offset: 25, length: 7 },
      ],
    });
  });

  it('nests entities, and gives a pre its language from the code inside', () => {
    expect(parseHtml('<b>bold <i>italic bold</i> bold</b>').entities).toEqual([
      { type: 'bold', offset: 0, length: 21 },
      { type: 'italic', offset: 5, length: 11 },
    ]);
    expect(parseHtml('<pre><code class="language-python">print(1)</code></pre>')).toEqual({
      text: 'print(1)',
      entities: [{ type: 'pre', offset: 0, length: 8, language: 'python' }],
    });
    expect(parseHtml('<blockquote expandable>long</blockquote>').entities).toEqual([{ type: 'expandable_blockquote', offset: 0, length: 4 }]);
  });

  it('makes a link a text_link entity, with the href decoded', () => {
    const formatted = parseHtml('<a href="http://www.example.com/?a=1&amp;b=2">inline URL</a>');
    expect(formatted).toEqual({ text: 'inline URL', entities: [{ type: 'text_link', offset: 0, length: 10, url: 'http://www.example.com/?a=1&b=2' }] });
    expect(displayOf(formatted)).toEqual({ shown: 'inline URL', links: [{ text: 'inline URL', url: 'http://www.example.com/?a=1&b=2' }] });
  });

  it('decodes the four named entities and every numeric one; any other & stays as typed', () => {
    expect(parseHtml('&lt;b&gt; &amp; &quot;q&quot; &#39; &#x1F680; &nbsp; AT&T').text).toBe('<b> & "q" \' 🚀 &nbsp; AT&T');
  });

  it('counts offsets in UTF-16 code units, as Telegram does', () => {
    expect(parseHtml('🚀 <b>go</b>').entities).toEqual([{ type: 'bold', offset: 3, length: 2 }]);
  });

  it('refuses a < that opens no supported tag, with the byte offset', () => {
    expect(failureOf(() => parseHtml('1 < 2'))).toEqual(cantParse('Unsupported start tag "" at byte offset 2'));
    expect(failureOf(() => parseHtml('é <br/>'))).toEqual(cantParse('Unsupported start tag "br" at byte offset 3'));
    expect(failureOf(() => parseHtml('<span>x</span>'))).toEqual(cantParse('Tag "span" must have class "tg-spoiler" at byte offset 0'));
  });

  it('refuses unclosed and mismatched tags', () => {
    expect(failureOf(() => parseHtml('<b>bold'))).toEqual(cantParse("Can't find end tag corresponding to start tag b"));
    expect(failureOf(() => parseHtml('<b><i>x</b></i>'))).toEqual(cantParse('Unmatched end tag at byte offset 7, expected "</i>", found "</b>"'));
    expect(failureOf(() => parseHtml('x</b>'))).toEqual(cantParse('Unexpected end tag at byte offset 1'));
    expect(failureOf(() => parseHtml('<a href="x'))).toEqual(cantParse('Unclosed start tag at byte offset 0'));
  });
});

describe('the fake Telegram parses parse_mode MarkdownV2 as the Bot API documents it', () => {
  it('turns the documented markup into entities', () => {
    expect(parseMarkdownV2('*bold \\*text*, _italic_, __underline__, ~strike~, ||spoiler||')).toEqual({
      text: 'bold *text, italic, underline, strike, spoiler',
      entities: [
        { type: 'bold', offset: 0, length: 10 },
        { type: 'italic', offset: 12, length: 6 },
        { type: 'underline', offset: 20, length: 9 },
        { type: 'strikethrough', offset: 31, length: 6 },
        { type: 'spoiler', offset: 39, length: 7 },
      ],
    });
    expect(parseMarkdownV2('[inline URL](http://www.example.com/)')).toEqual({
      text: 'inline URL',
      entities: [{ type: 'text_link', offset: 0, length: 10, url: 'http://www.example.com/' }],
    });
    expect(parseMarkdownV2('`a \\` b` and ```python\nprint(1)\n```')).toEqual({
      text: 'a ` b and print(1)\n',
      entities: [
        { type: 'code', offset: 0, length: 5 },
        { type: 'pre', offset: 10, length: 9, language: 'python' },
      ],
    });
    expect(parseMarkdownV2('>quoted\n>on\nafter')).toEqual({ text: 'quoted\non\nafter', entities: [{ type: 'blockquote', offset: 0, length: 9 }] });
  });

  it('refuses a reserved character that is not escaped, and an entity without its end', () => {
    expect(failureOf(() => parseMarkdownV2('end.'))).toEqual(cantParse("Character '.' is reserved and must be escaped with the preceding '\\'"));
    expect(failureOf(() => parseMarkdownV2('*bold'))).toEqual(cantParse("Can't find end of Bold entity at byte offset 0"));
    expect(parseMarkdownV2('end\\.').text).toBe('end.');
  });
});

describe('the fake Telegram without parse_mode', () => {
  it('keeps the text as sent and only the entities that fall inside it', () => {
    const entities = [
      { type: 'bold', offset: 0, length: 2 },
      { type: 'italic', offset: 3, length: 10 },
    ];
    expect(formattedTextOf('<b> & *x*', undefined, entities)).toEqual({ text: '<b> & *x*', entities: [{ type: 'bold', offset: 0, length: 2 }] });
  });
});
