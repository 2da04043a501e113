import { slackChannel } from '../../channels/slack/index.js';
import { FakeSlack } from '../fakes/slack/index.js';
import { type ContractUserMessage, channelContract, type PlatformHarness } from './channel-contract.js';
import type { RoundTripException } from './round-trip.js';

const GROUP_CHANNEL = 'C0GROUP1';
const OTHER_BOT = { user: 'U0OTHERBOT', botId: 'B0OTHER' };

/**
 * FakeSlack in the contract's words: a DM's channel is `D<user id>`; in the group channel the
 * harness mentions the bot (an `app_mention`). A reply is a message in the root's thread.
 */
async function startFakeSlack(options: { allowedUsers?: string[]; isNativeStreaming: boolean }): Promise<PlatformHarness> {
  const fake = new FakeSlack();
  await fake.start();
  const sender = (input: ContractUserMessage): { user: string; botId?: string } => {
    if (input.fromSelf) return { user: fake.botUserId, botId: fake.botId };
    if (input.fromOtherBot) return OTHER_BOT;
    return { user: input.userId };
  };
  // DMs stream natively when enabled: the first partial is chat.startStream, not chat.update.
  const editMethod = options.isNativeStreaming ? 'chat.startStream' : 'chat.update';
  return {
    config: {
      enabled: true,
      bot_token: fake.botToken,
      app_token: fake.appToken,
      api_url: fake.apiUrl,
      allowed_users: options.allowedUsers ?? [],
      native_streaming: options.isNativeStreaming,
    },
    sendUserMessage: async (input) => {
      const isPrivate = input.chat === 'private';
      const delivered = await fake.sendUserMessage({
        channel: isPrivate ? `D${input.userId}` : GROUP_CHANNEL,
        channelType: isPrivate ? 'im' : 'channel',
        text: isPrivate ? input.text : `<@${fake.botUserId}> ${input.text}`,
        eventType: isPrivate ? 'message' : 'app_mention',
        ...sender(input),
        ...(input.replyToMessageId === undefined ? {} : { threadTs: input.replyToMessageId }),
      });
      return { chatId: delivered.channel, messageId: delivered.ts };
    },
    botMessages: (chatId) =>
      fake.botMessages(chatId).map((m) => ({
        messageId: m.ts,
        text: m.text,
        ...(m.threadTs === undefined ? {} : { replyTo: m.threadTs }),
        history: m.history,
        sentAt: m.sentAt,
        editedAt: m.editedAt,
        shown: m.shown,
        links: m.links,
      })),
    waitFor: (predicate, timeoutMs) => fake.waitFor(predicate, timeoutMs),
    injectRateLimit: (method, retryAfterMs) => {
      // Slack's Retry-After is in whole seconds.
      fake.failNext(method === 'send' ? 'chat.postMessage' : editMethod, { kind: 'rate-limit', retryAfterSeconds: Math.ceil(retryAfterMs / 1000) });
    },
    rateLimitsServed: () =>
      fake.calls
        .filter((call) => call.response?.ok === false && call.response.status === 429)
        .map((call) => ({ chatId: String(call.params.channel), at: call.at })),
    rateLimitViolations: () => fake.rateLimitViolations.map((v) => ({ chatId: v.channel, at: v.at })),
    stop: () => fake.stop(),
  };
}

/** mrkdwn has no escape but for `&`, `<` and `>`: a pair of `*`, `_`, `~` or backticks around a word is formatting however it was written. */
const MRKDWN_RULE = 'mrkdwn escapes only &, < and > (api.slack.com/reference/surfaces/formatting#escaping); paired *, _, ~ and ` format the words between them';
const SLACK_UNESCAPABLE: Readonly<Record<string, RoundTripException>> = {
  'quoted emphasis markers': { shown: 'snake_case_name, __init__, stars, **bold** and under', rule: MRKDWN_RULE },
  'quoted code and strike markers': { shown: '~~struck~~, code, `double  tick` and a lone ', rule: MRKDWN_RULE },
  'quoted scripts': { shown: '你好 世界 🚀 مرحبا', rule: MRKDWN_RULE },
};

for (const isNativeStreaming of [true, false]) {
  channelContract({
    name: 'slack',
    definition: slackChannel,
    userIds: ['U0ALICE1', 'U0BOB002'],
    connectCommand: (code) => `/connect ${code}`,
    threadModel: { private: 'per-root-message', group: 'per-root-message' },
    // Native stream appends are Tier 4 (one per 600 ms here); chat.update is Tier 3 (one per 1200 ms).
    minEditIntervalMs: isNativeStreaming ? 600 : 1200,
    // Bolt acknowledges every event before we see it: Slack will not send a refused one again.
    tellsRefusals: true,
    // Every round-trip case shows as typed: mrkdwn for finals (tables as monospace code blocks),
    // `markdown_text` for stream partials. Quoted words with paired markers do not.
    roundTrip: { exceptions: SLACK_UNESCAPABLE },
    startPlatform: ({ allowedUsers }) => startFakeSlack({ ...(allowedUsers === undefined ? {} : { allowedUsers }), isNativeStreaming }),
  });
}
