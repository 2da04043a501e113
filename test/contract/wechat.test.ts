import { wechatChannel } from '../../channels/wechat/index.js';
import { displayText, FakeWeChat } from '../fakes/wechat/index.js';
import { channelContract, type PlatformHarness } from './channel-contract.js';

const OTHER_BOT = 'otherbot@im.bot';

/**
 * FakeWeChat in the contract's words. The iLink bot talks one to one, so a chat is its person and
 * there are no groups. A bot message "answers" the person's message whose `context_token` it
 * echoed. Our own sends come back through `getupdates` as `message_type` 2 (the self echo), as
 * do other bots' messages.
 */
async function startFakeWeChat(allowedUsers: string[] = []): Promise<PlatformHarness> {
  const fake = new FakeWeChat({ longPollHoldMs: 300 });
  await fake.start();
  return {
    config: {
      enabled: true,
      bot_token: fake.token,
      base_url: fake.baseUrl,
      cdn_base_url: fake.cdnBaseUrl,
      polling_timeout: 0.3,
      polling_retry_delay: 0.1,
      allowed_users: allowedUsers,
    },
    sendUserMessage: async (input) => {
      const fromBot = input.fromSelf ? fake.botId : input.fromOtherBot ? OTHER_BOT : undefined;
      const delivered = fake.sendUserMessage({ userId: input.userId, text: input.text, ...(fromBot ? { fromBot } : {}) });
      return { chatId: delivered.chatId, messageId: delivered.messageId };
    },
    botMessages: (chatId) =>
      fake.botMessages(chatId).map((m) => ({
        messageId: m.messageId,
        text: m.text,
        ...(m.replyTo === undefined ? {} : { replyTo: m.replyTo }),
        history: [m.text],
        sentAt: m.sentAt,
        editedAt: [],
        ...displayText(m.text),
      })),
    waitFor: (predicate, timeoutMs) => fake.waitFor(predicate, timeoutMs),
    injectRateLimit: (method, retryAfterMs) => {
      if (method === 'edit') throw new Error('WeChat edits no messages');
      fake.failNext('sendmessage', { kind: 'http', status: 429, retryAfterSeconds: Math.ceil(retryAfterMs / 1000) });
    },
    rateLimitsServed: () => fake.calls.filter((call) => call.status === 429).map((call) => ({ chatId: call.chatId ?? '', at: call.at })),
    rateLimitViolations: () => fake.rateLimitViolations,
    stop: () => fake.stop(),
  };
}

channelContract({
  name: 'wechat',
  definition: wechatChannel,
  userIds: ['alice@im.wechat', 'bob@im.wechat'],
  connectCommand: (code) => `/connect ${code}`,
  // Reference §3.3: one conversation per person; iLink has no group chats.
  threadModel: { private: 'per-chat' },
  // No edits: nothing is streamed, so no edit budget applies.
  minEditIntervalMs: 1000,
  acknowledgement: 'message',
  roundTrip: {
    exceptions: {
      'a link': {
        shown: 'read the docs (https://example.com/a_b?x=1&y=2) first',
        links: [{ text: 'https://example.com/a_b?x=1&y=2', url: 'https://example.com/a_b?x=1&y=2' }],
        rule: 'WeChat text has no link markup (sendmessage carries text_item.text only, @tencent-weixin/openclaw-weixin src/api/types.ts TextItem); the URL is written after its label and the client makes it tappable',
      },
    },
  },
  // A refused message leaves the cursor where it was: the next getupdates brings it again.
  keepsRefusedMessages: true,
  startPlatform: ({ allowedUsers }) => startFakeWeChat(allowedUsers),
});
