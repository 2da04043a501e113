import { describe, expect, it } from 'vitest';
import { decideMessage } from '../../../../channels/wecom/decide.js';
import type { ParsedMessage } from '../../../../channels/wecom/parse.js';

const MESSAGE: ParsedMessage = { messageId: 'm1', chatId: 'wrG', isPrivateChat: false, userId: 'alice', botId: 'bot1', text: '@DeerFlow hello', files: [] };
const CONTEXT = { allowedUsers: new Set<string>(), commandNames: new Set(['new', 'help']), canBind: true };

describe('decideMessage: what a WeCom message asks of core', () => {
  it('binds /connect <code> before the allow-list, per bot (reference §8.1)', () => {
    const decision = decideMessage({ ...MESSAGE, text: '@DeerFlow /connect Ab12' }, 'req1', { ...CONTEXT, allowedUsers: new Set(['bob']) });
    expect(decision).toMatchObject({
      kind: 'bind',
      deliveryKey: 'm1',
      request: { code: 'Ab12', identity: { externalAccountId: 'alice', workspaceId: 'bot1' }, metadata: { aibotid: 'bot1', chattype: 'group' } },
      answerTo: { chatId: 'wrG', replyTo: { messageId: 'm1' }, platformData: { reqId: 'req1' } },
    });
  });

  it('treats /connect as chat when binding is off, and ignores senders outside allowed_users', () => {
    expect(decideMessage({ ...MESSAGE, text: '/connect Ab12' }, 'req1', { ...CONTEXT, canBind: false }).kind).toBe('forward');
    expect(decideMessage(MESSAGE, 'req1', { ...CONTEXT, allowedUsers: new Set(['bob']) })).toEqual({ kind: 'ignore', reason: 'not-allowed' });
  });

  it('forwards chat with its mention, and a command without it; the bot scopes dedupe; the req_id rides along', () => {
    const chat = decideMessage(MESSAGE, 'req1', CONTEXT);
    expect(chat).toMatchObject({ kind: 'forward', deliveryKey: 'm1', message: { kind: 'chat', text: '@DeerFlow hello', workspaceId: 'bot1', platformData: { reqId: 'req1' } } });
    expect(chat.kind === 'forward' && chat.message.topicId).toBeUndefined();
    const command = decideMessage({ ...MESSAGE, text: '@DeerFlow /new fresh' }, 'req2', CONTEXT);
    expect(command).toMatchObject({ kind: 'forward', message: { kind: 'command', text: '/new fresh' } });
  });
});
