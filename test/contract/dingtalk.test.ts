import { dingtalkChannel } from '../../channels/dingtalk/index.js';
import { displayMessage } from '../fakes/dingtalk/display.js';
import { FakeDingTalk } from '../fakes/dingtalk/index.js';
import { botMessageView } from './bot-message-view.js';
import { channelContract, type PlatformHarness } from './channel-contract.js';

const CARD_TEMPLATE = 'fake-card-template.schema';

/**
 * FakeDingTalk in the contract's words. A P2P chat's id is the user's staff id; the group is one
 * conversation. DingTalk never delivers the robot's own messages or other robots' to a robot, so
 * the fake delivers a self echo (our bot's sender id, which ingress must drop) and does not
 * deliver the other bot's.
 *
 * With cards (`card_template_id` set) the acknowledgement is an AI card that the reply streams
 * into, so "send" is `createAndDeliver` and "edit" is `PUT /v1.0/card/streaming`.
 * Without cards DingTalk cannot edit anything: the acknowledgement is a standing "⏳" text and the
 * final arrives as new markdown messages, all through the message's session webhook, which stays
 * valid for the fake's whole run (so the robot API fallback is never taken here).
 */
async function startFakeDingTalk(options: { allowedUsers?: string[]; hasCards: boolean }): Promise<PlatformHarness> {
  const fake = new FakeDingTalk();
  await fake.start();
  let otherBotMessages = 0;
  return {
    config: {
      enabled: true,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
      api_url: fake.apiUrl,
      ...(options.hasCards ? { card_template_id: CARD_TEMPLATE } : {}),
      allowed_users: options.allowedUsers ?? [],
    },
    sendUserMessage: async (input) => {
      if (input.fromOtherBot) return { chatId: 'cidGROUP1', messageId: `not-delivered-${otherBotMessages++}` };
      // A reply in DingTalk quotes the message it answers.
      const delivered = await fake.sendUserMessage({
        chat: input.chat,
        userId: input.userId,
        text: input.text,
        ...(input.fromSelf ? { senderId: fake.chatbotUserId } : {}),
        ...(input.replyToMessageId === undefined ? {} : { quotedMessageId: input.replyToMessageId }),
      });
      return { chatId: delivered.chatId, messageId: delivered.msgId };
    },
    botMessages: (chatId) => fake.botMessages(chatId).map((m) => botMessageView(m.id, m, displayMessage(m.kind, m.text))),
    waitFor: (predicate, timeoutMs) => fake.waitFor(predicate, timeoutMs),
    injectRateLimit: (method, retryAfterMs) => {
      fake.failNext(rateLimitedPath(method, options.hasCards), { kind: 'rate-limit', retryAfterSeconds: Math.ceil(retryAfterMs / 1000) });
    },
    rateLimitsServed: () => fake.calls.filter((call) => call.status === 429).map((call) => ({ chatId: call.chatId ?? '', at: call.at })),
    rateLimitViolations: () => fake.rateLimitViolations,
    stop: () => fake.stop(),
  };
}

/** The path a reply's first `method` request goes to. */
function rateLimitedPath(method: 'send' | 'edit', hasCards: boolean): string {
  if (hasCards) return method === 'edit' ? '/v1.0/card/streaming' : '/v1.0/card/instances/createAndDeliver';
  if (method === 'edit') throw new Error('DingTalk without cards edits no messages');
  return '/robot/sendBySession';
}

for (const hasCards of [true, false]) {
  channelContract({
    name: 'dingtalk',
    variant: hasCards ? 'AI card' : 'no card',
    definition: dingtalkChannel,
    userIds: ['staffalice01', 'staffbob0002'],
    connectCommand: (code) => `/connect ${code}`,
    // Reference §3.3: every group message starts a conversation; quoting one continues it.
    threadModel: { private: 'per-chat', group: 'per-root-message' },
    // At most one non-final card update per 800 ms per card (platform-limits §5.1).
    minEditIntervalMs: 800,
    // Every case shows as the table says: tables as aligned code, lists and links DingTalk's own.
    roundTrip: {},
    // With cards the default (`placeholder`) holds; without, `streaming: 'none'` would default to `none`.
    ...(hasCards ? {} : { acknowledgement: 'message' as const }),
    startPlatform: ({ allowedUsers }) => startFakeDingTalk({ ...(allowedUsers === undefined ? {} : { allowedUsers }), hasCards }),
  });
}
