import { wecomChannel } from '../../channels/wecom/index.js';
import { WECOM_LIMITS } from '../../channels/wecom/limits.js';
import { displayWeComMarkdown, FakeWeCom } from '../fakes/wecom/index.js';
import { botMessageView } from './bot-message-view.js';
import { channelContract, type PlatformHarness } from './channel-contract.js';

/**
 * FakeWeCom in the contract's words. A single chat's id is the member's userid; the group is one
 * chat (`wrGROUP1`) and one conversation: WeCom's quote carries no message id, so a reply cannot
 * name the message it continues. WeCom calls an AI bot back only for members' messages, never for
 * its own or another bot's, so the fake delivers neither.
 *
 * The acknowledgement opens a stream (`aibot_respond_msg`, `finish: false`) answering the
 * message; "edit" is a further frame on that stream, "send" a markdown `aibot_send_msg`. WeCom's
 * rate-limit answer (errcode 45009) names no wait, so the adapter waits its
 * `defaultRetryAfterMs`; the fake closes the chat for the time the case asks, which must not be
 * longer.
 */
async function startFakeWeCom(options: { allowedUsers?: string[] }): Promise<PlatformHarness> {
  const fake = new FakeWeCom();
  await fake.start();
  let undelivered = 0;
  return {
    config: {
      enabled: true,
      bot_id: fake.botId,
      bot_secret: fake.secret,
      ws_url: fake.wsUrl,
      allowed_users: options.allowedUsers ?? [],
    },
    sendUserMessage: async (input) => {
      if (input.fromSelf || input.fromOtherBot) return { chatId: 'wrGROUP1', messageId: `not-delivered-${undelivered++}` };
      const delivered = await fake.sendUserMessage({ chat: input.chat, userId: input.userId, text: input.chat === 'group' ? `@DeerFlow ${input.text}` : input.text });
      return { chatId: delivered.chatId, messageId: delivered.msgid };
    },
    botMessages: (chatId) =>
      fake.botMessages(chatId).map((m) => {
        // Images and files show no text.
        const display = m.kind === 'stream' || m.kind === 'markdown' ? displayWeComMarkdown(m.text) : { shown: '', links: [] };
        return botMessageView(m.id, m, display);
      }),
    waitFor: (predicate, timeoutMs) => fake.waitFor(predicate, timeoutMs),
    injectRateLimit: (method, retryAfterMs) => {
      if (retryAfterMs > WECOM_LIMITS.defaultRetryAfterMs) throw new Error('WeCom names no wait: the adapter waits defaultRetryAfterMs, no longer');
      fake.failNext(method === 'edit' ? 'aibot_respond_msg' : 'aibot_send_msg', { kind: 'errcode', errcode: 45009, errmsg: 'api freq out of limit', blockMs: retryAfterMs });
    },
    rateLimitsServed: () => fake.frames.filter((f) => f.errcode === 45009).map((f) => ({ chatId: f.chatId ?? '', at: f.at })),
    rateLimitViolations: () => fake.rateLimitViolations,
    stop: () => fake.stop(),
  };
}

channelContract({
  name: 'wecom',
  definition: wecomChannel,
  userIds: ['alice.zhang', 'bob.li'],
  connectCommand: (code) => `/connect ${code}`,
  threadModel: { private: 'per-chat', group: 'per-chat' },
  minEditIntervalMs: WECOM_LIMITS.streamUpdateIntervalMs,
  // No ack to withhold: a message WeCom delivered is not delivered again because we refused it.
  tellsRefusals: true,
  roundTrip: {},
  startPlatform: ({ allowedUsers }) => startFakeWeCom(allowedUsers === undefined ? {} : { allowedUsers }),
});
