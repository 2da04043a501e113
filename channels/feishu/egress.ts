import { continuedUnder, createEditReply, type EditPrimitives } from '../../src/channel/edit-reply.js';
import { SplitPartRenderer } from '../../src/channel/markdown.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelEgress, Reply, ReplyTarget, RequestWindow } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { FeishuApi } from './api.js';
import type { CardRegistry } from './cards.js';
import { sourceMessageIds } from './file-batch.js';
import { FEISHU_LIMITS } from './limits.js';
import { FEISHU_CARD_DIALECT, withSourcePreview } from './render.js';
import type { GroupTopics } from './topics.js';

/** Reactions on the person's message (emoji_type, https://open.feishu.cn/document/server-docs/im-v1/message-reaction/emojis-introduce). */
export const FEISHU_REACTIONS = { received: 'OK', succeeded: 'DONE' } as const;

/** Tries per final request while Feishu answers with a rate limit. */
const FINAL_ATTEMPTS = 5;

export interface FeishuEgressOptions {
  api: FeishuApi;
  /** Per-chat blocks after a rate-limit answer; shared with nothing else. */
  gate: RateGate;
  /** Sends to one chat stay within Feishu's 5 a second. */
  pacer: RequestWindow;
  /** Running cards that are CardKit entities: those stream by element content, others by PATCH. */
  cards: CardRegistry;
  /** Told when a group reply is the agent's question, so the person's next message answers it. */
  topics: GroupTopics;
  logger: Logger;
  now: () => number;
}

/**
 * Replies are ONE card, the running card ingress posted: a CardKit streaming card updated at
 * most 8 times a second (element content, increasing `sequence`, streaming mode closed at the
 * end), or an interactive card (`update_multi: true`) patched at most 4 times a second; never text
 * edits (Feishu caps those at 20). The final is split into cards of at most 6000 characters; when
 * the last update fails it is posted as a new reply card instead. A rate-limit answer blocks the chat for
 * `x-ogw-ratelimit-reset`. The `DONE` reaction marks the person's message when the run succeeded.
 * In a group topic the first card quotes the message it answers (`sourcePreview`); a delivered
 * group question makes the person's next plain message its answer (`GroupTopics`).
 */
export function createFeishuEgress(options: FeishuEgressOptions): ChannelEgress {
  return {
    reply(target: ReplyTarget): Reply {
      const placeholderId = target.replyTo.placeholderId;
      const isCardkit = placeholderId !== undefined && options.cards.cardOf(placeholderId) !== undefined;
      const stream: CardStream = { sequence: 0 };
      const inner = createEditReply(feishuCardPrimitives(options, target, stream), {
        ...(placeholderId === undefined ? {} : { placeholderId }),
        ...(target.replyTo.messageId === undefined ? {} : { replyToMessageId: target.replyTo.messageId }),
        maxChars: FEISHU_LIMITS.maxMessageChars,
        minEditIntervalMs: isCardkit ? FEISHU_LIMITS.cardkitUpdateIntervalMs : FEISHU_LIMITS.cardPatchIntervalMs,
        gate: options.gate,
        gateKey: target.chatId,
        now: options.now,
        logger: options.logger,
        finalAttempts: FINAL_ATTEMPTS,
        platform: 'feishu',
      });
      const messageId = target.replyTo.messageId;
      return {
        update: (text) => inner.update(text),
        abandon: () => inner.abandon(),
        resumeAnchor: () => inner.resumeAnchor(),
        // The person's message, not the last card: it is where the DONE reaction goes.
        finalLeft: () => continuedUnder(inner.finalLeft(), messageId),
        async finish(text, outcome) {
          try {
            await inner.finish(text);
            // Recorded as soon as the question shows: the person may answer right away.
            const asker = target.recipient?.userId;
            if (outcome?.awaitsAnswer === true && !target.isPrivateChat && target.topicId !== undefined && asker !== undefined) {
              await options.topics.awaitAnswer(target.chatId, asker, target.topicId);
            }
          } finally {
            if (placeholderId !== undefined) await closeStream(options, placeholderId, stream);
          }
          if (messageId !== undefined && outcome?.failed !== true) {
            await Promise.all(
              sourceMessageIds(messageId, target.platformData).map((source) =>
                options.api.addReaction(source, FEISHU_REACTIONS.succeeded).catch((error: unknown) => {
                  options.logger.debug({ err: describeError(error) }, 'Feishu reaction not added');
                }),
              ),
            );
          }
        },
      };
    },
  };
}

/** The CardKit `sequence` of one reply's card: every operation on the card takes the next one. */
interface CardStream {
  sequence: number;
}

/** Turns streaming mode off on a CardKit running card (best effort) and forgets it. */
async function closeStream(options: FeishuEgressOptions, placeholderId: string, stream: CardStream): Promise<void> {
  const cardId = await options.cards.lookup(placeholderId);
  if (cardId === undefined) return;
  await options.api.closeStreamingCard(cardId, ++stream.sequence).catch((error: unknown) => {
    options.logger.debug({ err: describeError(error) }, 'Feishu streaming card not closed');
  });
  options.cards.forget(placeholderId);
}

/**
 * Cards for `createEditReply`: send = reply card (or a card in the chat); edit = the CardKit
 * element content (full text, next `sequence`) when the card is a CardKit entity, else PATCH.
 */
export function feishuCardPrimitives(options: FeishuEgressOptions, target: ReplyTarget, stream: CardStream): EditPrimitives {
  const { api, gate, pacer, now } = options;
  const chatId = target.chatId;
  const preview = typeof target.platformData?.sourcePreview === 'string' ? target.platformData.sourcePreview : undefined;
  // Cards answering the person's message (the running card, or a card replacing it) carry the
  // preview; the further cards of a long answer continue one another and do not.
  const previewCards = new Set(target.replyTo.placeholderId === undefined ? [] : [target.replyTo.placeholderId]);
  // Every text of the reply (partials, the final's parts) is the agent's Markdown, rendered once here.
  const renderer = new SplitPartRenderer(FEISHU_CARD_DIALECT);
  const onLimit = (error: unknown): never => {
    if (error instanceof ChannelError && error.retryAfterMs !== undefined) gate.block(chatId, error.retryAfterMs);
    throw error;
  };
  const admit = async (): Promise<void> => {
    const until = gate.blockedUntil(chatId);
    if (until !== undefined && until - now() > FEISHU_LIMITS.maxRetryAfterMs) {
      throw new ChannelError('feishu', 'CHANNEL_UNAVAILABLE', 'Feishu asked to wait longer than the adapter waits');
    }
    await gate.waitUntilOpen(chatId);
  };
  return {
    async send(text, replyToMessageId) {
      await admit();
      const parent = replyToMessageId ?? target.replyTo.messageId;
      const answersPerson = parent === target.replyTo.messageId;
      // A part that does not answer the person continues the part before it.
      const rendered = renderer.render(text, !answersPerson);
      const markdown = answersPerson ? withSourcePreview(rendered, preview) : rendered;
      const messageId = await pacer
        .run(chatId, () => (parent === undefined ? api.createCard(chatId, markdown) : api.replyCard(parent, markdown)))
        .catch(onLimit);
      if (answersPerson) previewCards.add(messageId);
      return messageId;
    },
    async edit(messageId, text) {
      // Patches count per message (5 QPS each), not per chat; the reply spaces its own.
      await admit();
      const cardId = await options.cards.lookup(messageId);
      const rendered = renderer.render(text, false);
      const markdown = previewCards.has(messageId) ? withSourcePreview(rendered, preview) : rendered;
      await (cardId === undefined ? api.patchCard(messageId, markdown) : api.streamCardContent(cardId, markdown, ++stream.sequence)).catch(onLimit);
    },
  };
}
