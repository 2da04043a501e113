import { describe, expect, it } from 'vitest';
import { type DecideContext, decideMessage } from '../../../../channels/feishu/decide.js';
import type { FeishuMessageEvent } from '../../../../channels/feishu/schemas.js';

const BOT = 'ou_bot';
const mentions = [{ key: '@_user_1', id: { open_id: BOT }, name: 'DeerFlow' }];
const text = (value: string) => JSON.stringify({ text: value });
const event = (message: Partial<FeishuMessageEvent['message']> = {}, sender: Partial<FeishuMessageEvent['sender']> = {}): FeishuMessageEvent => ({
  event_id: 'ev1',
  sender: { sender_id: { open_id: 'ou_alice' }, sender_type: 'user', ...sender },
  message: { message_id: 'om_1', chat_id: 'oc_1', chat_type: 'group', message_type: 'text', content: text('hi'), ...message },
});
const context = (overrides: Partial<DecideContext> = {}): DecideContext => ({
  allowedUsers: new Set(),
  commandNames: new Set(['new']),
  botOpenId: BOT,
  canBind: true,
  ...overrides,
});

describe('decideMessage', () => {
  it.each<[string, FeishuMessageEvent, Partial<DecideContext>, unknown]>([
    [
      'a group message starts its own conversation',
      event(),
      {},
      { kind: 'forward', deliveryKey: 'event:ev1', message: { channel: 'feishu', chatId: 'oc_1', topicId: 'om_1', userId: 'ou_alice', workspaceId: 'oc_1', messageId: 'om_1', text: 'hi', kind: 'chat', isPrivateChat: false, senderIsAllowlisted: false, platformData: {} } },
    ],
    ['a reply in a topic continues its root, with a preview of itself', event({ root_id: 'om_root', parent_id: 'om_card' }), {}, { kind: 'forward', message: { topicId: 'om_root', platformData: { rootId: 'om_root', parentId: 'om_card', sourcePreview: 'hi' } } }],
    ['a message in a thread continues the thread', event({ thread_id: 'omt_1' }), {}, { kind: 'forward', message: { topicId: 'omt_1', platformData: { threadId: 'omt_1', sourcePreview: 'hi' } } }],
    ['a p2p chat keeps no preview', event({ chat_type: 'p2p', root_id: 'om_root' }), {}, { kind: 'forward', message: { isPrivateChat: true, platformData: { rootId: 'om_root' } } }],
    ['without an event id the message id is the delivery', { ...event(), event_id: undefined }, {}, { kind: 'forward', deliveryKey: 'event:om_1' }],
    ["the bot's mention is removed, a command behind it classified", event({ content: text('@_user_1 /new'), mentions }), {}, { kind: 'forward', message: { text: '/new', kind: 'command' } }],
    [
      "the bot's mention is removed wherever it stands, another person's shown by name",
      event({ content: text('ask @_user_1 what @_user_2 meant by <b> & co'), mentions: [...mentions, { key: '@_user_2', id: { open_id: 'ou_bob' }, name: 'Bob' }] }),
      {},
      { kind: 'forward', message: { text: 'ask what @Bob meant by <b> & co', kind: 'chat' } },
    ],
    ['a picture carries its file', event({ message_type: 'image', content: JSON.stringify({ image_key: 'img_1' }) }), {}, { kind: 'forward', message: { text: '[image]', files: [{ isImage: true, mimeType: 'image/png', ref: JSON.stringify({ messageId: 'om_1', key: 'img_1', type: 'image' }) }] } }],
    ['an allowed sender', event(), { allowedUsers: new Set(['ou_alice']) }, { kind: 'forward', message: { senderIsAllowlisted: true } }],
    ['a sender not allowed', event(), { allowedUsers: new Set(['ou_bob']) }, { kind: 'ignore', reason: 'not-allowed' }],
    [
      '/connect behind a mention binds before the allow-list',
      event({ content: text('@_user_1 /connect Ab12'), mentions }),
      { allowedUsers: new Set(['ou_bob']) },
      {
        kind: 'bind',
        deliveryKey: 'event:ev1',
        request: { identity: { externalAccountId: 'ou_alice', workspaceId: 'oc_1' }, code: 'Ab12', metadata: { chat_id: 'oc_1', message_id: 'om_1' } },
        answerTo: { chatId: 'oc_1', isPrivateChat: false, replyTo: { messageId: 'om_1' } },
      },
    ],
    ['/connect without binding on is chat', event({ content: text('/connect Ab12') }), { canBind: false }, { kind: 'forward', message: { kind: 'chat', text: '/connect Ab12' } }],
    ['another app', event({}, { sender_type: 'app' }), {}, { kind: 'ignore', reason: 'not a person' }],
    ['the bot itself', event({}, { sender_id: { open_id: BOT } }), {}, { kind: 'ignore', reason: 'own message' }],
    ['an event without a chat', event({ chat_id: undefined }), {}, { kind: 'ignore', reason: 'incomplete event' }],
    ['a sticker', event({ message_type: 'sticker', content: JSON.stringify({ file_key: 'x' }) }), {}, { kind: 'ignore', reason: 'unsupported message type' }],
    ['a mention and nothing else', event({ content: text('@_user_1'), mentions }), {}, { kind: 'ignore', reason: 'empty message' }],
  ])('%s', (_name, input, overrides, expected) => {
    expect(decideMessage(input, context(overrides))).toMatchObject(expected as object);
  });

  it('gives a p2p chat no topic: it is one conversation', () => {
    expect(decideMessage(event({ chat_type: 'p2p', root_id: 'om_root' }), context())).not.toHaveProperty('message.topicId');
  });
});
