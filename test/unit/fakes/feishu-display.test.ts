import { describe, expect, it } from 'vitest';
import { displayCardMarkdown, displayMessage, displayText } from '../../fakes/feishu/display.js';

describe('FakeFeishu display model (card JSON 2.0 markdown)', () => {
  it("shows the rich text docs' example as its text, pinging @all", () => {
    // The content example of https://open.larkoffice.com/document/uAjLw4CM/ukzMukzMukzM/feishu-cards/card-components/content-components/rich-text
    const shown = displayCardMarkdown('notation字号\n标准emoji 😁😢🌞💼🏆❌✅\n*斜体*\n**粗体**\n~~删除线~~\n<at id=all></at>');
    expect(shown).toEqual({ shown: 'notation字号\n标准emoji 😁😢🌞💼🏆❌✅\n斜体\n粗体\n删除线\n@all', links: [], mentions: ['all'] });
  });

  it('reads links, code, lists and quotes as Markdown', () => {
    const shown = displayCardMarkdown('[文字](https://open.feishu.cn/a_b?x=1&y=2) and `a && b`\n\n- 项\n    - 子项\n1. 一\n\n> 引用\n\n```go\nx := <-ch\n```');
    expect(shown.shown).toBe('文字 and a && b\n\n• 项\n  • 子项\n1. 一\n\n引用\n\nx := <-ch');
    expect(shown.links).toEqual([{ text: '文字', url: 'https://open.feishu.cn/a_b?x=1&y=2' }]);
  });

  it('draws emoji shortcodes, unless a reference breaks them', () => {
    expect(displayCardMarkdown('done :DONE: &#58;OK: 10:30').shown).toBe('done [emoji DONE] :OK: 10:30');
  });

  it('draws a table in the canonical monospace form', () => {
    expect(displayCardMarkdown('| a | long header |\n|---|---|\n| 1 | x |').shown).toBe('| a   | long header |\n| --- | ----------- |\n| 1   | x           |');
  });

  it('treats tags as markup and character references as the characters', () => {
    expect(displayCardMarkdown("<font color='red'>红</font> <b>b</b> &lt;b&gt; &amp;lt; &#42;x&#42; a<br>b").shown).toBe('红 b <b> &lt; *x* a\nb');
    expect(displayCardMarkdown('<at id=ou_123></at> hi')).toMatchObject({ shown: '@ou_123 hi', mentions: ['ou_123'] });
  });

  it('shows a text message as written, its at tags as mentions', () => {
    expect(displayText('<at user_id="ou_1">Tom</at> **not bold** <b>bold</b> [site](https://open.feishu.cn) &lt;')).toEqual({
      shown: '@Tom **not bold** bold site &lt;',
      links: [{ text: 'site', url: 'https://open.feishu.cn' }],
      mentions: ['ou_1'],
    });
    expect(displayMessage('text', '*x*').shown).toBe('*x*');
    expect(displayMessage('interactive', '*x*').shown).toBe('x');
  });
});
