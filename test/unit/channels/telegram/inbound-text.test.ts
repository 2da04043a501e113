import type { Message, MessageEntity } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import { decideMessage } from '../../../../channels/telegram/decide.js';
import { readableText } from '../../../../channels/telegram/inbound-text.js';

const BOT = 'test_bot';

describe('readableText: what the model reads of a Telegram message', () => {
  it('keeps what was typed as typed: Telegram sends plain text, markup characters and all', () => {
    const typed = 'compare 1 < 2 && 3 > 2, a *b* _c_ `d` &amp;';
    expect(readableText(typed, undefined, BOT)).toBe(typed);
  });

  it('removes a leading mention of the bot, with the space after it, in any letter case', () => {
    const entities: MessageEntity[] = [{ type: 'mention', offset: 0, length: 9 }];
    expect(readableText('@Test_Bot   what is new?', entities, BOT)).toBe('what is new?');
  });

  it('keeps a mention of the bot inside the sentence, and mentions of anyone else', () => {
    const text = 'ask @alice_w or @test_bot later';
    const entities: MessageEntity[] = [
      { type: 'mention', offset: 4, length: 8 },
      { type: 'mention', offset: 16, length: 9 },
    ];
    expect(readableText(text, entities, BOT)).toBe(text);
  });

  it('writes a text_mention (someone without a username) as @First Last', () => {
    // Real shape: the entity covers the name as the sender's app showed it, and carries the user.
    const entities: MessageEntity[] = [{ type: 'text_mention', offset: 5, length: 3, user: { id: 51, is_bot: false, first_name: 'Bob', last_name: 'Ray' } }];
    expect(readableText('than Bob for this', entities, BOT)).toBe('than @Bob Ray for this');
  });

  it('writes a text_link as label (url), or just the url when the label is the url', () => {
    const text = 'see the docs or https://x.test/a';
    const entities: MessageEntity[] = [
      { type: 'text_link', offset: 4, length: 8, url: 'https://example.com/a_b?x=1&y=2' },
      { type: 'text_link', offset: 16, length: 16, url: 'https://x.test/a' },
    ];
    expect(readableText(text, entities, BOT)).toBe('see the docs (https://example.com/a_b?x=1&y=2) or https://x.test/a');
  });

  it('counts offsets in UTF-16 code units: emoji before an entity do not shift it', () => {
    // As Telegram counts: 🚀 is two UTF-16 units, 👍🏽 four, 👨‍👩‍👧‍👦 eleven, so `this` starts at 24 (at code point 12).
    const text = '🚀👍🏽 👨‍👩‍👧‍👦 read this';
    const entities: MessageEntity[] = [{ type: 'text_link', offset: 24, length: 4, url: 'https://example.com/' }];
    expect(readableText(text, entities, BOT)).toBe('🚀👍🏽 👨‍👩‍👧‍👦 read this (https://example.com/)');
  });

  it('keeps the text of styling entities, and ignores entities that are malformed, overlap or fall outside', () => {
    const text = 'bold link';
    const entities = [
      { type: 'bold', offset: 0, length: 9 },
      { type: 'text_link', offset: 5, length: 4, url: 'https://a.test/' },
      { type: 'text_link', offset: 6, length: 2, url: 'https://overlap.test/' },
      { type: 'text_link', offset: 7, length: 40, url: 'https://outside.test/' },
      { type: 'text_mention', offset: 'x', length: 1 },
      null,
    ];
    expect(readableText(text, entities, BOT)).toBe('bold link (https://a.test/)');
    expect(readableText(text, 'not a list', BOT)).toBe(text);
  });
});

describe('decideMessage reads text and captions through readableText', () => {
  const group = { id: -100, type: 'supergroup', title: 'Ops' } as Message['chat'];
  const from = { id: 1, is_bot: false, first_name: 'Ana' };
  const context = { botUsername: BOT, allowedUsers: new Set<number>(), commandNames: new Set(['new']), canBind: false };

  it('a group message addressed with @bot reaches the model without the mention, and a command after it is a command', () => {
    const message = (text: string) =>
      ({ message_id: 7, date: 0, chat: group, from, text, entities: [{ type: 'mention', offset: 0, length: 9 }] }) as Message;
    expect(decideMessage(message('@test_bot hello there'), context)).toMatchObject({ kind: 'forward', message: { text: 'hello there', kind: 'chat' } });
    expect(decideMessage(message('@test_bot /new topic'), context)).toMatchObject({ kind: 'forward', message: { text: '/new topic', kind: 'command' } });
  });

  it('a caption keeps its links', () => {
    const message = {
      message_id: 8,
      date: 0,
      chat: group,
      from,
      photo: [{ file_id: 'f', file_unique_id: 'u', width: 1, height: 1 }],
      caption: 'from here',
      caption_entities: [{ type: 'text_link', offset: 5, length: 4, url: 'https://a.test/' }],
    } as Message;
    expect(decideMessage(message, context)).toMatchObject({ kind: 'forward', message: { text: 'from here (https://a.test/)' } });
  });

  it('a message that only mentions the bot is empty', () => {
    const message = { message_id: 9, date: 0, chat: group, from, text: '@test_bot', entities: [{ type: 'mention', offset: 0, length: 9 }] } as Message;
    expect(decideMessage(message, context)).toEqual({ kind: 'ignore', reason: 'empty' });
  });
});
