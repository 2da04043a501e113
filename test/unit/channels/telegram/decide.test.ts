import type { Message } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import { type DecideContext, decideMessage, TELEGRAM_REPLIES } from '../../../../channels/telegram/decide.js';

function message(text: string, fromId = 42, chat: Message['chat'] = { id: 42, type: 'private', first_name: 'Ana' }): Message {
  return { message_id: 7, date: 0, chat, from: { id: fromId, is_bot: false, first_name: 'Ana', last_name: 'Lima', username: 'ana' }, text } as Message;
}

const context = (overrides: Partial<DecideContext> = {}): DecideContext => ({
  botUsername: 'test_bot',
  allowedUsers: new Set([1]),
  commandNames: new Set(['new', 'help']),
  canBind: true,
  ...overrides,
});

/** The welcome, answered in the chat without replying to /start. */
const welcome = (chatId: string) => ({ kind: 'answer', text: TELEGRAM_REPLIES.welcome, answerTo: { chatId, isPrivateChat: true, replyTo: {} } });

describe('decideMessage and /start <code>', () => {
  it('binds before allowed_users, so a sender not yet listed can connect', () => {
    expect(decideMessage(message('/start abc123'), context())).toEqual({
      kind: 'bind',
      answerTo: { chatId: '42', isPrivateChat: true, replyTo: { messageId: '7' } },
      request: {
        identity: { externalAccountId: '42', workspaceId: '42' },
        code: 'abc123',
        accountName: 'Ana Lima',
        metadata: { chat_id: 42, chat_type: 'private', telegram_username: 'ana' },
      },
    });
  });

  it('binds per chat in groups, names the group, and accepts /start@bot <code>', () => {
    const group = { id: -100, type: 'supergroup', title: 'Ops' } as Message['chat'];
    const decision = decideMessage(message('/start@test_bot xyz', 42, group), context());
    expect(decision).toMatchObject({
      kind: 'bind',
      request: { identity: { externalAccountId: '42', workspaceId: '-100' }, code: 'xyz', workspaceName: 'Ops' },
    });
  });

  it('without binding, /start <code> is a welcome for allowed senders and ignored for others', () => {
    expect(decideMessage(message('/start abc', 1, { id: 1, type: 'private', first_name: 'x' }), context({ canBind: false }))).toEqual(welcome('1'));
    expect(decideMessage(message('/start abc'), context({ canBind: false }))).toEqual({ kind: 'ignore', reason: 'not-allowed' });
  });

  it('takes the first token after /start as the code', () => {
    expect(decideMessage(message('/start abc123 thanks!'), context())).toMatchObject({ kind: 'bind', request: { code: 'abc123' } });
  });

  it('a bare /start is never a bind', () => {
    expect(decideMessage(message('/start', 1, { id: 1, type: 'private', first_name: 'x' }), context())).toEqual(welcome('1'));
  });
});
