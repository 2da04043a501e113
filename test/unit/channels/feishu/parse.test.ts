import { describe, expect, it } from 'vitest';
import { parseContent, stripLeadingMentions } from '../../../../channels/feishu/parse.js';

const BOT = 'ou_bot';
const mentions = [{ key: '@_user_1', id: { open_id: BOT }, name: 'DeerFlow' }];

describe('parseContent', () => {
  it('reads text as typed: the bot mention removed with its space, others as @name', () => {
    const people = [...mentions, { key: '@_user_2', id: { open_id: 'ou_alice' }, name: 'Alice' }, { key: '@_user_10', id: { open_id: 'ou_ten' }, name: 'Ten' }];
    const read = (text: string) => parseContent('text', JSON.stringify({ text }), people, BOT)?.text;
    expect(read('@_user_1 hello')).toBe('hello');
    expect(read('ask @_user_1 about it')).toBe('ask about it');
    expect(read('thanks @_user_1')).toBe('thanks');
    expect(read('@_user_1 ping @_user_2 and @_user_10')).toBe('ping @Alice and @Ten');
    expect(read('@_all standup')).toBe('@all standup');
    expect(read('1 < 2 && &amp; `x` trailing ')).toBe('1 < 2 && &amp; `x` trailing ');
  });

  it('keeps the bot mention when the bot is not yet known', () => {
    expect(parseContent('text', JSON.stringify({ text: '@_user_1 hello' }), mentions)).toEqual({ text: '@DeerFlow hello', files: [] });
  });

  it('flattens a post: title, a line per paragraph, elements run on, links as label (href)', () => {
    // Element shapes from https://open.feishu.cn/document/server-docs/im-v1/message-content-description/message_content
    const content = JSON.stringify({
      title: 'Title',
      content: [
        [{ tag: 'at', user_id: '@_user_1', user_name: 'DeerFlow' }, { tag: 'text', text: ' look at ' }, { tag: 'text', text: 'this', style: ['bold'] }, { tag: 'img', image_key: 'img_1' }],
        [],
        [{ tag: 'a', text: 'the docs', href: 'https://x.example/a?b=1&c=2' }, { tag: 'text', text: ' and ' }, { tag: 'a', text: 'https://y.example', href: 'https://y.example' }, { tag: 'media', file_key: 'file_1' }],
        [{ tag: 'code_block', language: 'JS', text: 'a && b < c\n' }],
        [{ tag: 'md', text: '**kept** as written' }, { tag: 'hr' }, { tag: 'at', user_id: 'ou_carol', user_name: 'Carol' }],
      ],
    });
    const parsed = parseContent('post', content, mentions, BOT);
    expect(parsed?.text).toBe('Title\n\nlook at this [image]\n\nthe docs (https://x.example/a?b=1&c=2) and https://y.example [file]\n```js\na && b < c\n```\n**kept** as written\n---\n@Carol');
    expect(parsed?.files.map((f) => [f.type, f.key])).toEqual([
      ['image', 'img_1'],
      ['file', 'file_1'],
    ]);
  });

  it('reads a locale-wrapped post', () => {
    expect(parseContent('post', JSON.stringify({ zh_cn: { title: '', content: [[{ tag: 'text', text: '你好' }]] } }))?.text).toBe('你好');
  });

  it('reads image and file messages', () => {
    expect(parseContent('image', JSON.stringify({ image_key: 'img_v3_0123456789abcdef' }))).toMatchObject({ text: '[image]', files: [{ type: 'image', key: 'img_v3_0123456789abcdef' }] });
    expect(parseContent('file', JSON.stringify({ file_key: 'fk', file_name: 'a.pdf' }))).toMatchObject({ text: '[file]', files: [{ name: 'a.pdf' }] });
  });

  it('returns undefined for unknown types and bad content', () => {
    expect(parseContent('sticker', JSON.stringify({ file_key: 'x' }))).toBeUndefined();
    expect(parseContent('text', '{oops')).toBeUndefined();
    expect(parseContent('image', '{}')).toBeUndefined();
  });

  it('strips leading mentions only', () => {
    expect(stripLeadingMentions('@DeerFlow /new x', mentions)).toBe('/new x');
    expect(stripLeadingMentions('hi @DeerFlow', mentions)).toBe('hi @DeerFlow');
  });
});
