import { describe, expect, it } from 'vitest';
import { parseCallback } from '../../../../channels/wecom/parse.js';
import { callbackBodySchema } from '../../../../channels/wecom/schemas.js';

const IMAGE = { url: 'https://wecom.example/image', aeskey: 'a2V5' };
const FILE = { url: 'https://wecom.example/file', aeskey: 'a2V5' };

function body(fields: Record<string, unknown>) {
  return callbackBodySchema.parse({ msgid: 'm1', aibotid: 'bot1', chattype: 'single', from: { userid: 'alice' }, ...fields });
}

describe('parseCallback: what the agent reads of a WeCom message (reference §6.7)', () => {
  const cases: { name: string; fields: Record<string, unknown>; text: string; files: number }[] = [
    { name: 'text', fields: { msgtype: 'text', text: { content: 'hello' } }, text: 'hello', files: 0 },
    {
      name: 'text with a quote',
      fields: { msgtype: 'text', text: { content: 'and this?' }, quote: { msgtype: 'text', text: { content: 'earlier words' } } },
      text: 'and this?\nQuote message: earlier words',
      files: 0,
    },
    { name: 'a null quote', fields: { msgtype: 'text', text: { content: 'hi' }, quote: null }, text: 'hi', files: 0 },
    { name: 'a quote whose text is null', fields: { msgtype: 'text', text: { content: 'hi' }, quote: { msgtype: 'text', text: null } }, text: 'hi', files: 0 },
    { name: 'a quote whose content is null', fields: { msgtype: 'text', text: { content: 'hi' }, quote: { msgtype: 'text', text: { content: null } } }, text: 'hi', files: 0 },
    { name: 'an image alone', fields: { msgtype: 'image', image: IMAGE }, text: '（receive image ）', files: 1 },
    { name: 'a file alone', fields: { msgtype: 'file', file: FILE }, text: '（receive file）', files: 1 },
    {
      name: 'mixed without text',
      fields: { msgtype: 'mixed', mixed: { msg_item: [{ msgtype: 'image', image: IMAGE }, { msgtype: 'image', image: IMAGE }] } },
      text: '（receive image/file）',
      files: 2,
    },
    {
      name: 'mixed with text',
      fields: { msgtype: 'mixed', mixed: { msg_item: [{ msgtype: 'text', text: { content: 'look' } }, { msgtype: 'image', image: IMAGE }, { msgtype: 'text', text: { content: 'here' } }] } },
      text: 'look\nhere',
      files: 1,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const parsed = parseCallback(body(c.fields));
      expect(parsed?.text).toBe(c.text);
      expect(parsed?.files).toHaveLength(c.files);
    });
  }

  it('reads a single chat as the member\'s and a group message as the group\'s', () => {
    expect(parseCallback(body({ msgtype: 'text', text: { content: 'hi' } }))).toMatchObject({ chatId: 'alice', isPrivateChat: true, userId: 'alice', botId: 'bot1', messageId: 'm1' });
    expect(parseCallback(body({ chattype: 'group', chatid: 'wrG', msgtype: 'text', text: { content: 'hi' } }))).toMatchObject({ chatId: 'wrG', isPrivateChat: false, userId: 'alice' });
  });

  it('keeps a file\'s link and key in its ref, for the download only', () => {
    const [file] = parseCallback(body({ msgtype: 'file', file: FILE }))?.files ?? [];
    expect(JSON.parse(file?.ref ?? '{}')).toEqual(FILE);
    expect(file).toMatchObject({ isImage: false, mimeType: 'application/octet-stream' });
  });

  it('drops voice and video, empty text, and a group message without its chatid', () => {
    expect(parseCallback(body({ msgtype: 'voice', voice: { content: 'spoken' } }))).toBeUndefined();
    expect(parseCallback(body({ msgtype: 'text', text: { content: '  ' } }))).toBeUndefined();
    expect(parseCallback(body({ chattype: 'group', msgtype: 'text', text: { content: 'hi' } }))).toBeUndefined();
  });

  it('refuses bodies without the fields every message has', () => {
    expect(callbackBodySchema.safeParse({ msgid: 'm1', chattype: 'single', msgtype: 'text' }).success).toBe(false);
    expect(callbackBodySchema.safeParse({ msgid: 'm1', aibotid: 'b', chattype: 'single', from: { userid: 7 }, msgtype: 'text' }).success).toBe(false);
  });
});
