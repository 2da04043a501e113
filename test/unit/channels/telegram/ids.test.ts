import { describe, expect, it } from 'vitest';
import {
  isPrivateChatType,
  parseTelegramId,
  type TopicSource,
  topicIdFor,
} from '../../../../channels/telegram/ids.js';

describe('topicIdFor (reference §3.3)', () => {
  it.each<[string, TopicSource, string | undefined]>([
    ['private chat: one conversation per chat', { chatType: 'private', messageId: 5 }, undefined],
    ['private reply: still one conversation', { chatType: 'private', messageId: 6, replyToMessageId: 5 }, undefined],
    ['group top-level: its own id', { chatType: 'group', messageId: 42 }, '42'],
    ['group reply: the replied-to id', { chatType: 'group', messageId: 43, replyToMessageId: 42 }, '42'],
    ['supergroup top-level', { chatType: 'supergroup', messageId: 9 }, '9'],
    ['supergroup reply', { chatType: 'supergroup', messageId: 10, replyToMessageId: 3 }, '3'],
  ])('%s', (_name, source, topicId) => {
    expect(topicIdFor(source)).toBe(topicId);
  });

  it('only private chats are private', () => {
    expect(['private', 'group', 'supergroup', 'channel'].map((t) => isPrivateChatType(t as never))).toEqual([
      true,
      false,
      false,
      false,
    ]);
  });
});

describe('parseTelegramId', () => {
  it.each([
    ['777', 777],
    ['-1001234567890', -1001234567890],
  ])('%s → %d', (id, value) => {
    expect(parseTelegramId(id)).toBe(value);
  });

  it.each(['', '1.5', '12a', ' 1', '99999999999999999999'])('rejects %j', (id) => {
    expect(() => parseTelegramId(id)).toThrow(RangeError);
  });
});
