import type { User } from 'grammy/types';
import { telegramChannel } from '../../channels/telegram/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { type ContractUserMessage, channelContract, type PlatformHarness } from './channel-contract.js';

/** A supergroup: Telegram group chat ids are negative. */
const GROUP_CHAT_ID = -1001234567890;
const OTHER_BOT: Partial<User> = { id: 999_000, is_bot: true, first_name: 'Other Bot', username: 'other_bot' };
const METHODS = { send: 'sendMessage', edit: 'editMessageText' } as const;

/** FakeTelegram in the contract's words: a private chat's id is its user's id. */
async function startFakeTelegram(allowedUsers: string[] = []): Promise<PlatformHarness> {
  const fake = new FakeTelegram();
  await fake.start();
  const self: Partial<User> = { id: fake.botInfo.id, is_bot: true, first_name: fake.botInfo.first_name, username: fake.botInfo.username };
  const sender = (input: ContractUserMessage): Partial<User> => {
    if (input.fromSelf) return self;
    if (input.fromOtherBot) return OTHER_BOT;
    return { id: Number(input.userId), is_bot: false };
  };
  return {
    config: {
      enabled: true,
      bot_token: fake.token,
      api_root: fake.apiRoot,
      polling_timeout_seconds: 1,
      allowed_users: allowedUsers,
    },
    sendUserMessage: async (input) => {
      const chatId = input.chat === 'private' ? Number(input.userId) : GROUP_CHAT_ID;
      const message = fake.sendUserMessage({
        chatId,
        chatType: input.chat === 'private' ? 'private' : 'supergroup',
        text: input.text,
        from: sender(input),
        replyToMessageId: input.replyToMessageId === undefined ? undefined : Number(input.replyToMessageId),
      });
      return { chatId: String(chatId), messageId: String(message.message_id) };
    },
    botMessages: (chatId) =>
      fake.botMessages(Number(chatId)).map((m) => ({
        messageId: String(m.messageId),
        text: m.text,
        ...(m.replyTo === undefined ? {} : { replyTo: String(m.replyTo) }),
        history: m.history,
        sentAt: m.sentAt,
        editedAt: m.editedAt,
        shown: m.display.shown,
        links: m.display.links,
      })),
    waitFor: (predicate, timeoutMs) => fake.waitFor(predicate, timeoutMs),
    injectRateLimit: (method, retryAfterMs) => {
      // Telegram's retry_after is in whole seconds.
      fake.failNext(METHODS[method], { errorCode: 429, retryAfter: Math.ceil(retryAfterMs / 1000) });
    },
    rateLimitsServed: () =>
      fake.calls
        .filter((call) => call.response?.ok === false && call.response.errorCode === 429)
        .map((call) => ({ chatId: String(call.params.chat_id), at: call.at })),
    rateLimitViolations: () => fake.rateLimitViolations.map((v) => ({ chatId: String(v.chatId), at: v.at })),
    stop: () => fake.stop(),
  };
}

channelContract({
  name: 'telegram',
  definition: telegramChannel,
  userIds: ['777', '778'],
  connectCommand: (code) => `/start ${code}`,
  threadModel: { private: 'per-chat', group: 'per-root-message' },
  // Bot FAQ: "avoid sending more than one message per second" in one chat.
  minEditIntervalMs: 1000,
  // An update the intake refused is not confirmed: Telegram keeps it for the next poll.
  keepsRefusedMessages: true,
  // Every case shows exactly: HTML parse mode escapes only & < >, and bullets and tables are text.
  roundTrip: { exceptions: {} },
  startPlatform: ({ allowedUsers }) => startFakeTelegram(allowedUsers),
});
