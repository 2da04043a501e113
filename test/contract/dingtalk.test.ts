import { dingtalkChannel } from '../../channels/dingtalk/index.js';
import { FakeDingTalk } from '../fakes/dingtalk/index.js';
import { channelContract, type PlatformHarness } from './channel-contract.js';

const CARD_TEMPLATE = 'fake-card-template.schema';

/**
 * FakeDingTalk in the contract's words, in card mode (`card_template_id` set): the
 * acknowledgement is an AI card that the reply streams into, so "edit" is `PUT /v1.0/card/streaming`.
 * A P2P chat's id is the user's staff id; the group is one conversation. DingTalk never delivers
 * the robot's own messages or other robots' to a robot, so the fake delivers a self echo (our
 * bot's sender id, which ingress must drop) and does not deliver the other bot's.
 * Without a template the contract's streaming case cannot hold (the "⏳" text and the final are two
 * messages on a platform without edits); that mode is covered by the integration tests.
 */
async function startFakeDingTalk(options: { allowedUsers?: string[] }): Promise<PlatformHarness> {
  const fake = new FakeDingTalk();
  await fake.start();
  let otherBotMessages = 0;
  return {
    config: {
      enabled: true,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
      api_url: fake.apiUrl,
      card_template_id: CARD_TEMPLATE,
      allowed_users: options.allowedUsers ?? [],
    },
    sendUserMessage: async (input) => {
      if (input.fromOtherBot) return { chatId: 'cidGROUP1', messageId: `not-delivered-${otherBotMessages++}` };
      // A reply in DingTalk is a new message in the same conversation (quoting is not a thread).
      const delivered = await fake.sendUserMessage({
        chat: input.chat,
        userId: input.userId,
        text: input.text,
        ...(input.fromSelf ? { senderId: fake.chatbotUserId } : {}),
      });
      return { chatId: delivered.chatId, messageId: delivered.msgId };
    },
    botMessages: (chatId) =>
      fake.botMessages(chatId).map((m) => ({
        messageId: m.id,
        text: m.text,
        ...(m.replyTo === undefined ? {} : { replyTo: m.replyTo }),
        history: m.history,
        sentAt: m.sentAt,
        editedAt: m.editedAt,
      })),
    waitFor: (predicate, timeoutMs) => fake.waitFor(predicate, timeoutMs),
    injectRateLimit: (method, retryAfterMs) => {
      const path = method === 'edit' ? '/v1.0/card/streaming' : '/v1.0/card/instances/createAndDeliver';
      fake.failNext(path, { kind: 'rate-limit', retryAfterSeconds: Math.ceil(retryAfterMs / 1000) });
    },
    rateLimitsServed: () =>
      fake.calls
        .filter((call) => call.status === 429)
        .map((call) => ({ chatId: chatOfCall(fake, call.path, call.body), at: call.at })),
    rateLimitViolations: () => fake.rateLimitViolations,
    stop: () => fake.stop(),
  };
}

function chatOfCall(fake: FakeDingTalk, path: string, body: Record<string, unknown>): string {
  if (path === '/v1.0/card/streaming') return fake.chats.find(String(body.outTrackId))?.chatId ?? '';
  return String(body.openSpaceId ?? '').replace(/^dtv1\.card\/\/IM_(ROBOT|GROUP)\./, '');
}

channelContract({
  name: 'dingtalk',
  definition: dingtalkChannel,
  userIds: ['staffalice01', 'staffbob0002'],
  connectCommand: (code) => `/connect ${code}`,
  threadModel: { private: 'per-chat', group: 'per-chat' },
  // At most one non-final card update per 800 ms per card (platform-limits §5.1).
  minEditIntervalMs: 800,
  startPlatform: ({ allowedUsers }) => startFakeDingTalk(allowedUsers === undefined ? {} : { allowedUsers }),
});
