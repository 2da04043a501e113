import { continuedUnder, createEditReply } from '../../src/channel/edit-reply.js';
import { PLAIN_TEXT_DIALECT, SplitPartRenderer } from '../../src/channel/markdown.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import { splitText } from '../../src/channel/split.js';
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
 * new messages, split at 4000 characters, after the standing acknowledgement. WeChat shows plain
 * text: the agent's Markdown is rendered to its visible text (core's `PLAIN_TEXT_DIALECT`: no
 * markup, bullets for lists, aligned tables, a link's URL after its label).
 */
export function createWeChatEgress(options: WeChatEgressOptions): ChannelEgress {
  return { reply: (target) => finalOnlyReply(target, options) };
}

function finalOnlyReply(target: ReplyTarget, options: WeChatEgressOptions): Reply {
  const replyToMessageId = target.replyTo.messageId;
  const renderer = new SplitPartRenderer(PLAIN_TEXT_DIALECT);
  const inner = createEditReply(
    {
      // Each part of the split Markdown is rendered on its own (a code block it cut stays code).
      send: async (markdown, previousPartId) => {
        const rendered = renderer.render(markdown, previousPartId !== undefined && previousPartId !== replyToMessageId);
        // Markdown that renders to nothing (a lone link definition) is sent as typed, never as an empty message.
        const plain = rendered.trim() === '' ? markdown : rendered;
        // Rendering pads tables, so a part may grow past the limit: it then goes as several messages.
        let id = '';
        for (const piece of splitText(plain, WECHAT_LIMITS.maxMessageChars)) id = await options.sender.text(target, piece);
        return id;
      },
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
