import { continuedUnder, createEditReply } from '../../src/channel/edit-reply.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelEgress, Reply, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { WECHAT_LIMITS } from './limits.js';
import type { WeChatSender } from './sender.js';

export interface WeChatEgressOptions {
  sender: WeChatSender;
  /** Shared with ingress: a rate-limited chat gets nothing until it opens. */
  gate: RateGate;
  logger: Logger;
  now: () => number;
}

/**
 * Replies. WeChat cannot edit a sent message, so partials are not shown: the final goes out as
 * new messages, split at 4000 characters, after the standing acknowledgement. The agent's
 * Markdown is sent as is (WeChat shows plain text; core has no plain-text renderer yet).
 */
export function createWeChatEgress(options: WeChatEgressOptions): ChannelEgress {
  return { reply: (target) => finalOnlyReply(target, options) };
}

function finalOnlyReply(target: ReplyTarget, options: WeChatEgressOptions): Reply {
  const replyToMessageId = target.replyTo.messageId;
  const inner = createEditReply(
    {
      send: (text) => options.sender.text(target, text),
      edit: async () => {
        throw new ChannelError('wechat', 'CHANNEL_REJECTED', 'WeChat messages cannot be edited');
      },
    },
    {
      ...(replyToMessageId === undefined ? {} : { replyToMessageId }),
      maxChars: WECHAT_LIMITS.maxMessageChars,
      minEditIntervalMs: 0,
      gate: options.gate,
      gateKey: target.chatId,
      now: options.now,
      logger: options.logger,
      platform: 'wechat',
    },
  );
  return {
    update: () => undefined,
    finish: (text, outcome) => inner.finish(text, outcome),
    // Parts follow one another in the chat; the context token comes from the message answered.
    finalLeft: () => continuedUnder(inner.finalLeft(), replyToMessageId),
  };
}
