import { describe, expect, it } from 'vitest';
import { CONTEXT_TOKEN, type DecideContext, decideWeChatMessage } from '../../../../channels/wechat/decide.js';
import { wechatMessageSchema } from '../../../../channels/wechat/schemas.js';

const context: DecideContext = { allowedUsers: new Set(), commandNames: new Set(['new', 'help']), canBind: true };

function message(fields: Record<string, unknown>) {
  return wechatMessageSchema.parse({ message_id: '7230000000000000001', from_user_id: 'alice@im.wechat', message_type: 1, context_token: 'ctx-1', ...fields });
}

const text = (value: string) => ({ item_list: [{ type: 1, text_item: { text: value } }] });

describe('decideWeChatMessage', () => {
  it('forwards a person\'s text as chat in their own chat, keeping the context token for the reply', () => {
    expect(decideWeChatMessage(message(text('hello')), context)).toEqual({
      kind: 'forward',
      deliveryKey: 'alice@im.wechat:7230000000000000001',
      message: {
        channel: 'wechat',
        chatId: 'alice@im.wechat',
        userId: 'alice@im.wechat',
        senderIsAllowlisted: false,
        workspaceId: 'alice@im.wechat',
        messageId: '7230000000000000001',
        text: 'hello',
        kind: 'chat',
        isPrivateChat: true,
        platformData: { [CONTEXT_TOKEN]: 'ctx-1' },
      },
    });
  });

  it.each([
    ['/new start over', 'command'],
    ['/NEW', 'command'],
    ['/etc/hosts', 'chat'],
    ['/some-skill do it', 'chat'],
    [' /new', 'chat'],
  ])('classifies %j as %s', (typed, kind) => {
    const decision = decideWeChatMessage(message(text(typed)), context);
    expect(decision.kind === 'forward' && decision.message.kind).toBe(kind);
  });

  it('joins text items and voice transcripts with newlines', () => {
    const decision = decideWeChatMessage(
      message({ item_list: [{ type: 1, text_item: { text: 'one' } }, { type: 3, voice_item: { text: 'two' } }, { type: 1, text_item: { text: 'three' } }] }),
      context,
    );
    expect(decision.kind === 'forward' && decision.message.text).toBe('one\ntwo\nthree');
  });

  it.each([
    ['a bot message (our own echo)', { message_type: 2, ...text('echo') }],
    ['a message of unknown type', { message_type: 0, ...text('x') }],
    ['nothing to read (a sticker)', { item_list: [{ type: 5, video_item: {} }] }],
    ['a message without any id', { message_id: undefined, client_id: undefined, ...text('x') }],
  ])('ignores %s', (_name, fields) => {
    expect(decideWeChatMessage(message(fields), context).kind).toBe('ignore');
  });

  it('binds /connect <code> before the allow-list, and drops others not allowed', () => {
    const strict = { ...context, allowedUsers: new Set(['bob@im.wechat']) };
    expect(decideWeChatMessage(message(text('/connect Ab12')), strict)).toMatchObject({
      kind: 'bind',
      request: { code: 'Ab12', identity: { externalAccountId: 'alice@im.wechat', workspaceId: 'alice@im.wechat' } },
      answerTo: { chatId: 'alice@im.wechat', platformData: { [CONTEXT_TOKEN]: 'ctx-1' } },
    });
    expect(decideWeChatMessage(message(text('hi')), strict)).toEqual({ kind: 'ignore', reason: 'not-allowed' });
    expect(decideWeChatMessage(message({ from_user_id: 'bob@im.wechat', ...text('hi') }), strict)).toMatchObject({ kind: 'forward', message: { senderIsAllowlisted: true } });
  });

  it('treats /connect as chat when binding is off', () => {
    expect(decideWeChatMessage(message(text('/connect Ab12')), { ...context, canBind: false })).toMatchObject({ kind: 'forward', message: { text: '/connect Ab12' } });
  });
});
