import { discordChannel } from '../../channels/discord/index.js';
import { FakeDiscord, type FakeUser } from '../fakes/discord/index.js';
import { type ContractUserMessage, channelContract, type PlatformHarness } from './channel-contract.js';

const OTHER_BOT: FakeUser = { id: '9000000000000000001', username: 'other-bot', bot: true };

/**
 * FakeDiscord in the contract's words: a private chat is the DM channel of its user; the group
 * is the server's #general. The bot acknowledges with a reaction and the typing indicator, which
 * are not messages: the chat shows no placeholder (`acknowledgement: 'none'`).
 */
async function startFakeDiscord(allowedUsers: string[] = []): Promise<PlatformHarness> {
  const fake = new FakeDiscord();
  await fake.start();
  const author = (input: ContractUserMessage): FakeUser => {
    if (input.fromSelf) return fake.bot;
    if (input.fromOtherBot) return OTHER_BOT;
    return { id: input.userId, username: `user-${input.userId.slice(-4)}` };
  };
  return {
    config: { enabled: true, bot_token: fake.token, api_url: fake.apiRoot, allowed_users: allowedUsers },
    sendUserMessage: async (input) => {
      const message = fake.sendUserMessage({
        ...(input.chat === 'group' ? { channelId: fake.channelIds.general } : {}),
        author: author(input),
        content: input.text,
        ...(input.replyToMessageId === undefined ? {} : { replyToMessageId: input.replyToMessageId }),
      });
      return { chatId: message.channelId, messageId: message.id };
    },
    botMessages: (chatId) =>
      fake.botMessages(chatId).map((m) => ({
        messageId: m.id,
        text: m.content,
        ...(m.replyTo === undefined ? {} : { replyTo: m.replyTo }),
        history: m.history,
        sentAt: m.sentAt,
        editedAt: m.editedAt,
        ...fake.display(m),
      })),
    waitFor: (predicate, timeoutMs) => fake.waitFor(predicate, timeoutMs),
    injectRateLimit: (method, retryAfterMs) => fake.failNext(method, { status: 429, retryAfterMs }),
    rateLimitsServed: () =>
      fake.calls.filter((call) => call.status === 429).map((call) => ({ chatId: call.channelId ?? '', at: call.at })),
    rateLimitViolations: () => fake.rateLimitViolations.map((v) => ({ chatId: v.channelId, at: v.at })),
    stop: () => fake.stop(),
  };
}

channelContract({
  name: 'discord',
  definition: discordChannel,
  userIds: ['700000000000000001', '700000000000000002'],
  connectCommand: (code) => `/connect ${code}`,
  threadModel: { private: 'per-chat', group: 'per-root-message' },
  // Our spacing of edits per channel (channels/discord/limits.ts).
  minEditIntervalMs: 1200,
  acknowledgement: 'none',
  // The gateway hands an event over once: a refused message gets the busy notice.
  tellsRefusals: true,
  // Discord shows every case as typed: its markdown has backslash escapes for every markup character.
  roundTrip: { exceptions: {} },
  startPlatform: ({ allowedUsers }) => startFakeDiscord(allowedUsers),
});
