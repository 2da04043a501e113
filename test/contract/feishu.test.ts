import { feishuChannel } from '../../channels/feishu/index.js';
import { displayMessage } from '../fakes/feishu/display.js';
import { FakeFeishu } from '../fakes/feishu/index.js';
import { botMessageView } from './bot-message-view.js';
import { type ContractUserMessage, channelContract, type PlatformHarness } from './channel-contract.js';

const GROUP_CHAT = 'oc_group0000000000000000000000001';
const OTHER_BOT = 'ou_otherbot000000000000000000000';

/**
 * FakeFeishu in the contract's words: a private chat is a p2p chat `oc_p2p_<user>`; in the group
 * the harness @mentions the bot. A reply is a card replying to the person's message; the fake's
 * PATCHes are its edits. Events come down the real SDK's long connection.
 */
async function startFakeFeishu(options: { allowedUsers?: string[]; isCardkit: boolean }): Promise<PlatformHarness> {
  const fake = new FakeFeishu();
  await fake.start();
  const sender = (input: ContractUserMessage): { openId: string; senderType: 'user' | 'app' } => {
    if (input.fromSelf) return { openId: fake.botOpenId, senderType: 'app' };
    if (input.fromOtherBot) return { openId: OTHER_BOT, senderType: 'app' };
    return { openId: input.userId, senderType: 'user' };
  };
  return {
    config: { enabled: true, app_id: fake.appId, app_secret: fake.appSecret, domain: fake.url, allowed_users: options.allowedUsers ?? [], cardkit: options.isCardkit },
    sendUserMessage: async (input) => {
      const isPrivate = input.chat === 'private';
      const sent = fake.sendUserMessage({
        chatId: isPrivate ? `oc_p2p_${input.userId}` : GROUP_CHAT,
        chatType: isPrivate ? 'p2p' : 'group',
        text: input.text,
        mentionsBot: !isPrivate,
        ...sender(input),
        ...(input.replyToMessageId === undefined ? {} : { parentId: input.replyToMessageId }),
      });
      return { chatId: sent.chatId, messageId: sent.messageId };
    },
    botMessages: (chatId) => fake.botMessages(chatId).map((m) => botMessageView(m.messageId, m, displayMessage(m.msgType, m.text))),
    waitFor: (predicate, timeoutMs) => fake.waitFor(predicate, timeoutMs),
    injectRateLimit: (method, retryAfterMs) => {
      fake.failNext(method === 'send' ? 'send' : 'patch', { kind: 'rate-limit', resetSeconds: Math.ceil(retryAfterMs / 1000) });
    },
    rateLimitsServed: () => fake.calls.filter((call) => call.status === 429).map((call) => ({ chatId: call.chatId ?? '', at: call.at })),
    rateLimitViolations: () => [
      ...fake.rateLimitViolations.map((v) => ({ chatId: v.chatId, at: v.at })),
      // Over CardKit's 10 operations a second on one card counts as ignoring a limit too.
      ...fake.cardRateViolations.map((v) => ({ chatId: v.cardId, at: v.at })),
    ],
    stop: () => fake.stop(),
  };
}

for (const isCardkit of [true, false]) {
  channelContract({
    name: 'feishu',
    variant: isCardkit ? 'CardKit card' : 'interactive card',
    definition: feishuChannel,
    userIds: ['ou_alice00000000000000000000000001', 'ou_bob0000000000000000000000000002'],
    connectCommand: (code) => `/connect ${code}`,
    // p2p: one conversation per chat (reference §3.3); groups: one per root message, replies continue it.
    threadModel: { private: 'per-chat', group: 'per-root-message' },
    // CardKit: at most 8 element updates a second per card; interactive card PATCH: at most 4.
    minEditIntervalMs: isCardkit ? 125 : 250,
    // The long connection acks a frame once the handler returns: Feishu will not send a refused one again.
    tellsRefusals: true,
    // Card JSON 2.0 markdown draws every case of the table, tables included: no exceptions.
    roundTrip: {},
    startPlatform: (options) => startFakeFeishu({ ...options, isCardkit }),
  });
}
