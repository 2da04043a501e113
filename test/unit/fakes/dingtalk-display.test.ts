import { describe, expect, it } from 'vitest';
import { displayMessage } from '../../fakes/dingtalk/display.js';

const markdown = (text: string) => displayMessage('markdown', text);

describe('FakeDingTalk display model (markdown messages and card content)', () => {
  it("shows the message-type page's markdown example", () => {
    // The `markdown` example of https://open.dingtalk.com/document/orgapp/message-types-and-data-format
    const shown = markdown('#### 杭州天气 @150XXXXXXXX \n > 9度，西北风1级，空气良89，相对温度73%\n > ![screenshot](https://img.alicdn.com/tfs/TB1NwmBEL9TBuNjy1zbXXXpepXa-2400-1218.png)\n > ###### 10点20分发布 [天气](https://www.dingtalk.com) \n');
    expect(shown).toEqual({
      shown: '杭州天气 @150XXXXXXXX\n9度，西北风1级，空气良89，相对温度73% screenshot\n10点20分发布 天气',
      links: [{ text: '天气', url: 'https://www.dingtalk.com' }],
      mentions: [],
    });
  });

  it('draws the documented subset and lists', () => {
    expect(markdown('**bold** *italic*\n\n- item1\n- item2\n\n1. item1\n2. item2').shown).toBe('bold italic\n\n• item1\n• item2\n\n1. item1\n2. item2');
  });

  it('shows what it does not draw as typed: tables, strike-through, inline code', () => {
    expect(markdown('| a | b |\n|---|---|\n| 1 | 2 |').shown).toBe('| a | b | |---|---| | 1 | 2 |');
    expect(markdown('~~gone~~ `code`').shown).toBe('~~gone~~ `code`');
  });

  it('joins lines unless broken, and renders HTML, inside code blocks too', () => {
    expect(markdown('one\ntwo  \nthree').shown).toBe('one two\nthree');
    expect(markdown('<font color=#FF0000>red</font> &lt;b&gt;\n\n```\n<b>x</b> &amp;&lt;\n```').shown).toBe('red <b>\n\nx &<');
  });

  it('shows text messages as written', () => {
    expect(displayMessage('text', '**not bold** &lt;').shown).toBe('**not bold** &lt;');
  });
});
