import { describe, expect, it } from 'vitest';
import { parseContent, stripLeadingMentions } from '../../../../channels/feishu/parse.js';

const BOT = 'ou_bot';
const mentions = [{ key: '@_user_1', id: { open_id: BOT }, name: 'DeerFlow' }];

describe('parseContent', () => {
  it('reads text, replacing mention keys with names', () => {
    expect(parseContent('text', JSON.stringify({ text: '@_user_1 hello' }), mentions)).toEqual({ text: '@DeerFlow hello', files: [] });
  });

  it('reads a post: paragraphs joined by blank lines, elements by spaces, images and files as placeholders', () => {
    const content = JSON.stringify({
      title: 'Title',
      content: [
        [{ tag: 'at', user_id: '@_user_1' }, { tag: 'text', text: 'look' }, { tag: 'img', image_key: 'img_1' }],
        [],
        [{ tag: 'a', text: 'link', href: 'https://x' }, { tag: 'media', file_key: 'file_1' }],
      ],
    });
    const parsed = parseContent('post', content, mentions);
    expect(parsed?.text).toBe('Title\n\n@DeerFlow look [image]\n\nlink [file]');
    expect(parsed?.files.map((f) => [f.type, f.key])).toEqual([['image', 'img_1'], ['file', 'file_1']]);
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
