import { describe, expect, it } from 'vitest';
import { parseRobotMessage, type RobotMessage, stripLeadingMentions } from '../../../../channels/dingtalk/parse.js';

const BASE: RobotMessage = {
  msgId: 'msg1',
  conversationId: 'cidX',
  conversationType: '1',
  senderId: '$:LWCP_v1:$abc',
  senderStaffId: 'staff1',
  senderNick: 'Ann',
  chatbotUserId: '$:LWCP_v1:$bot',
  msgtype: 'text',
  text: { content: ' hello' },
  sessionWebhook: 'https://oapi.dingtalk.com/robot/sendBySession?session=x',
  sessionWebhookExpiredTime: 1000,
};

describe('parseRobotMessage', () => {
  it('keys P2P chats by the sender and groups by the conversation (string or number type)', () => {
    expect(parseRobotMessage(BASE)).toMatchObject({ chatId: 'staff1', isPrivateChat: true, userId: 'staff1', text: 'hello', conversationId: 'cidX' });
    expect(parseRobotMessage({ ...BASE, conversationType: '2' })).toMatchObject({ chatId: 'cidX', isPrivateChat: false });
    expect(parseRobotMessage({ ...BASE, conversationType: 2 })).toMatchObject({ chatId: 'cidX', isPrivateChat: false });
  });

  it('reads text as typed: markup characters, references and trailing spaces kept, the leading space dropped', () => {
    const typed = '1 < 2 && &amp; **x** `y` @Bo trailing ';
    expect(parseRobotMessage({ ...BASE, conversationType: '2', text: { content: ` ${typed}` } })?.text).toBe(typed);
  });

  it('falls back to the sender id without a staff id', () => {
    const { senderStaffId: _, ...rest } = BASE;
    expect(parseRobotMessage(rest)).toMatchObject({ userId: '$:LWCP_v1:$abc', chatId: '$:LWCP_v1:$abc' });
  });

  it.each<[string, RobotMessage]>([
    ['no message id', { ...BASE, msgId: '' }],
    ['no conversation', { ...BASE, conversationId: '' }],
    ['no sender', { ...BASE, senderStaffId: '', senderId: '' }],
    ['the bot itself', { ...BASE, senderId: '$:LWCP_v1:$bot' }],
    ['empty text', { ...BASE, text: { content: '  ' } }],
    ['mentions only', { ...BASE, text: { content: '@Ann @Bo' } }],
    ['an unknown type', { ...BASE, msgtype: 'chatRecord' }],
    ['a picture without a code', { ...BASE, msgtype: 'picture', content: {} }],
  ])('drops %s', (_name, message) => {
    expect(parseRobotMessage(message)).toBeUndefined();
  });

  it('reads pictures, rich text and files as file references', () => {
    expect(parseRobotMessage({ ...BASE, msgtype: 'picture', content: { downloadCode: 'dc1' } })?.files).toEqual([
      { name: 'image.png', mimeType: 'image/png', isImage: true, ref: 'dc1' },
    ]);
    const rich = parseRobotMessage({
      ...BASE,
      msgtype: 'richText',
      content: { richText: [{ text: 'a ' }, { type: 'picture', downloadCode: 'p0' }, { type: 'picture', pictureDownloadCode: 'p1' }, { text: 'b' }] },
    });
    expect(rich).toMatchObject({ text: 'a b', files: [{ name: 'image_0.png', ref: 'p0' }, { name: 'image_1.png', ref: 'p1' }] });
    expect(parseRobotMessage({ ...BASE, msgtype: 'file', content: { downloadCode: 'f1' } })?.files).toEqual([
      { name: 'file.bin', mimeType: 'application/octet-stream', isImage: false, ref: 'f1' },
    ]);
  });

  it('keeps the session webhook with its expiry', () => {
    expect(parseRobotMessage(BASE)?.sessionWebhook).toEqual({ url: BASE.sessionWebhook, expiresAt: 1000 });
  });
});

describe('stripLeadingMentions', () => {
  it.each([
    ['@bot /new x', '/new x'],
    ['@a @b hi', 'hi'],
    ['hi @a', 'hi @a'],
    [' @a hi', ' @a hi'],
  ])('%s', (input, expected) => {
    expect(stripLeadingMentions(input)).toBe(expected);
  });
});
