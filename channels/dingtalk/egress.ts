import { continuedUnder, createEditReply } from '../../src/channel/edit-reply.js';
import { SplitPartRenderer } from '../../src/channel/markdown.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelEgress, Reply, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { CardApi } from './card.js';
import { DINGTALK_LIMITS } from './limits.js';
import { DINGTALK_MARKDOWN_DIALECT } from './render.js';
import type { RobotSender } from './sender.js';

export interface DingTalkEgressOptions {
  sender: RobotSender;
  /** Present when `card_template_id` is set: replies stream into AI cards. */
  cards?: CardApi;
  gate: RateGate;
  logger: Logger;
  now: () => number;
}

/** Ids of markdown messages (which DingTalk cannot edit) start with this. */
const MARKDOWN_ID = 'markdown:';

/**
 * Replies. With cards: partials replace the card's content (full text, at most one non-final
 * update per 800 ms, rate limits waited out), the final is a finalize call that is never
 * dropped, and if the card fails the final goes out as markdown. Without cards: only the final,
 * as adapted markdown, split at the limit.
 */
export function createDingTalkEgress(options: DingTalkEgressOptions): ChannelEgress {
  return { reply: (target) => (options.cards ? cardReply(target, options, options.cards) : markdownReply(target, options)) };
}

/**
 * Renders every text of one reply (the agent's Markdown) once: a part sent as a reply to an
 * earlier bot message continues it (a code block it left open is reopened).
 */
function replyRenderer(target: ReplyTarget): (text: string, replyToMessageId?: string) => string {
  const renderer = new SplitPartRenderer(DINGTALK_MARKDOWN_DIALECT);
  return (text, replyToMessageId) => renderer.render(text, replyToMessageId !== undefined && replyToMessageId !== target.replyTo.messageId);
}

function markdownReply(target: ReplyTarget, options: DingTalkEgressOptions): Reply {
  let sequence = 0;
  const render = replyRenderer(target);
  const inner = createEditReply(
    {
      send: async (text, replyToMessageId) => {
        await options.sender.markdown(target, render(text, replyToMessageId));
        return `${MARKDOWN_ID}${sequence++}`;
      },
      edit: async () => {
        throw new ChannelError('dingtalk', 'CHANNEL_REJECTED', 'DingTalk markdown messages cannot be edited');
      },
    },
    baseOptions(target, options),
  );
  // No streaming without a card: partials are not shown.
  return {
    update: () => undefined,
    finish: (text) => inner.finish(text),
    finalLeft: () => continuedUnder(inner.finalLeft(), target.replyTo.messageId),
  };
}

function cardReply(target: ReplyTarget, options: DingTalkEgressOptions, cards: CardApi): Reply {
  let isFinishing = false;
  let sequence = 0;
  /** What each card shows and whether it was finalized. */
  const shown = new Map<string, { text: string; isFinal: boolean }>();
  const render = replyRenderer(target);
  const inner = createEditReply(
    {
      send: async (text, replyToMessageId) => {
        const markdown = render(text, replyToMessageId);
        if (isFinishing) {
          await options.sender.markdown(target, markdown);
          return `${MARKDOWN_ID}${sequence++}`;
        }
        const id = await cards.create(target, markdown);
        shown.set(id, { text: markdown, isFinal: false });
        return id;
      },
      edit: async (id, text) => {
        if (id.startsWith(MARKDOWN_ID)) throw new ChannelError('dingtalk', 'CHANNEL_REJECTED', 'DingTalk markdown messages cannot be edited');
        const isFinal = isFinishing;
        const markdown = render(text);
        await cards.stream(id, markdown, isFinal);
        shown.set(id, { text: markdown, isFinal });
      },
    },
    { ...baseOptions(target, options), minEditIntervalMs: DINGTALK_LIMITS.cardUpdateIntervalMs },
  );
  return {
    update: (text) => inner.update(text),
    abandon: () => inner.abandon(),
    resumeAnchor: () => inner.resumeAnchor(),
    finalLeft: () => continuedUnder(inner.finalLeft(), target.replyTo.messageId),
    finish: async (text, outcome) => {
      isFinishing = true;
      await inner.finish(text, outcome);
      // A card that already showed the final text was not edited again: close its stream now.
      for (const [id, state] of shown) {
        if (state.isFinal) continue;
        await cards.stream(id, state.text, true).catch((error: unknown) => {
          options.logger.warn({ err: describeError(error) }, 'closing the DingTalk card stream failed');
        });
      }
    },
  };
}

function baseOptions(target: ReplyTarget, options: DingTalkEgressOptions) {
  const placeholderId = target.replyTo.placeholderId;
  const replyToMessageId = target.replyTo.messageId;
  return {
    ...(placeholderId === undefined ? {} : { placeholderId }),
    ...(replyToMessageId === undefined ? {} : { replyToMessageId }),
    maxChars: DINGTALK_LIMITS.maxMessageChars,
    minEditIntervalMs: DINGTALK_LIMITS.cardUpdateIntervalMs,
    gate: options.gate,
    gateKey: target.chatId,
    now: options.now,
    logger: options.logger,
    platform: 'dingtalk',
  };
}
