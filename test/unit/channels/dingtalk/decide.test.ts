import { describe, expect, it } from 'vitest';
import { type DecideContext, decideRobotMessage } from '../../../../channels/dingtalk/decide.js';
import type { ParsedRobotMessage } from '../../../../channels/dingtalk/parse.js';

const P2P: ParsedRobotMessage = { messageId: 'msg1', chatId: 'staff1', conversationId: 'cidP', isPrivateChat: true, userId: 'staff1', userName: 'Ann', text: 'hello', files: [] };
const GROUP: ParsedRobotMessage = { ...P2P, chatId: 'cidG', conversationId: 'cidG', isPrivateChat: false };
const context = (overrides: Partial<DecideContext> = {}): DecideContext => ({
  allowedUsers: new Set(),
  commandNames: new Set(['status', 'new']),
  canBind: true,
  ...overrides,
});

describe('decideRobotMessage', () => {
  it.each<[string, ParsedRobotMessage, Partial<DecideContext>, unknown]>([
    ['chat in a P2P chat', P2P, {}, { kind: 'forward', deliveryKey: 'msg1', message: { kind: 'chat', text: 'hello', chatId: 'staff1', workspaceId: 'cidP', senderIsAllowlisted: false } }],
    ['a command after a mention, handed over as the command', { ...GROUP, text: '@DeerFlow /status' }, {}, { kind: 'forward', message: { kind: 'command', text: '/status' } }],
    ['chat after a mention keeps its text', { ...GROUP, text: '@Bob look at this' }, {}, { kind: 'forward', message: { kind: 'chat', text: '@Bob look at this' } }],
    ['an allowed sender', P2P, { allowedUsers: new Set(['staff1']) }, { kind: 'forward', message: { senderIsAllowlisted: true } }],
    ['a sender not allowed', P2P, { allowedUsers: new Set(['someone-else']) }, { kind: 'ignore', reason: 'not-allowed' }],
    ['/connect from a sender not allowed yet binds', { ...P2P, text: '/connect ABC123' }, { allowedUsers: new Set(['someone-else']) }, { kind: 'bind', deliveryKey: 'msg1', request: { identity: { externalAccountId: 'staff1' }, code: 'ABC123', accountName: 'Ann' } }],
    ['/connect in a group binds in that conversation', { ...GROUP, text: '@DeerFlow /connect ABC123' }, {}, { kind: 'bind', request: { identity: { externalAccountId: 'staff1', workspaceId: 'cidG' }, code: 'ABC123' }, answerTo: { chatId: 'cidG', replyTo: { messageId: 'msg1' } } }],
    ['a group message starts its own conversation', GROUP, {}, { kind: 'forward', message: { topicId: 'msg1' } }],
    ['a group message quoting another carries the quote, settled once admitted', { ...GROUP, quotedMessageId: 'msg0' }, {}, { kind: 'forward', message: { topicId: 'msg1', platformData: { quotedMessageId: 'msg0' } } }],
    ['/connect without binding on is chat', { ...P2P, text: '/connect ABC123' }, { canBind: false }, { kind: 'forward', message: { kind: 'chat', text: '/connect ABC123' } }],
  ])('%s', (_name, message, overrides, expected) => {
    expect(decideRobotMessage(message, context(overrides))).toMatchObject(expected as object);
  });
});
