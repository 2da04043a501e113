import { createEditReply, type EditPrimitives } from '../../src/channel/edit-reply.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import { type Sleep, sleep as defaultSleep } from '../../src/time.js';
import type { ChannelEgress, Reply, ReplyTarget } from '../../src/channel/types.js';
import { randomBytes } from 'node:crypto';
import { ChannelError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { DiscordApi } from './api.js';
import { snowflakeTimeMs } from './ids.js';
import { DISCORD_LIMITS } from './limits.js';
import { partedReply } from '../../src/channel/parted-reply.js';
import { discordParts, renderWithin } from './parts.js';
import type { TypingIndicators } from './typing.js';

/** Tries per final message while Discord keeps answering 429 past discord.js's own waiting. */
const FINAL_ATTEMPTS = 5;
/**
 * Waits before the 2nd and 3rd try of a call Discord did not answer (network, 5xx), after
 * discord.js's own immediate retries: reference §6.0 (3 attempts, 2^attempt s apart). A send
 * carries a nonce Discord enforces, so a retry never posts the message twice.
 */
export const UNAVAILABLE_RETRY_DELAYS_MS: readonly number[] = [1000, 2000];

export interface DiscordEgressOptions {
  api: DiscordApi;
  /** Waits between tries of an unanswered call; default {@link sleep}. */
  sleep?: Sleep;
  /** Keyed by channel id; shared with ingress and files. */
  gate: RateGate;
  typing: TypingIndicators;
  logger: Logger;
  now: () => number;
}

/**
 * The message a reply should reference: none when it starts a thread (the thread's id is its
 * starter message's, which sits in the parent channel and cannot be referenced from inside).
 */
export function replyReferenceFor(channelId: string, messageId: string | undefined): string | undefined {
  return messageId === channelId ? undefined : messageId;
}

/**
 * Replies stream by editing one message, posted with the first partial as a reply to the
 * user's message, at most every 1.2 s per channel. The agent's Markdown is rendered into
 * Discord's dialect (`render.ts`) at each send and edit, from the whole text: a partial longer
 * than a message shows its first part and `…`; the final is cut into parts that each render
 * within 2000 characters (`parts.ts`), each further part a new message replying to the one
 * before. Messages older than an hour are not edited (Discord limits those edits, error 30046):
 * the stream continues in a new message. The typing indicator ends with the reply's first
 * message, or with the reply.
 */
export function createDiscordEgress(options: DiscordEgressOptions): ChannelEgress {
  const { api, gate, typing, logger, now } = options;
  const retrying = <T>(request: () => Promise<T>) => retryUnanswered(request, options.sleep ?? defaultSleep);
  const { maxMessageChars } = DISCORD_LIMITS;
  return {
    reply(target: ReplyTarget): Reply {
      const channelId = target.chatId;
      const primitives: EditPrimitives = {
        send: async (markdown, replyToMessageId) => {
          const nonce = randomBytes(12).toString('hex');
          const content = renderWithin(markdown, maxMessageChars);
          const id = await retrying(() => api.sendText(channelId, content, replyReferenceFor(channelId, replyToMessageId), nonce));
          typing.stop(channelId);
          return id;
        },
        edit: async (messageId, markdown) => {
          if (now() - snowflakeTimeMs(messageId) >= DISCORD_LIMITS.editWindowMs) {
            throw new ChannelError('discord', 'CHANNEL_REJECTED', 'message is older than an hour; not edited');
          }
          const content = renderWithin(markdown, maxMessageChars);
          await retrying(() => api.editText(channelId, messageId, content));
        },
      };
      const editReply = (anchor: { placeholderId?: string; replyToMessageId?: string }) =>
        createEditReply(primitives, {
          ...anchor,
          // The Markdown is measured after rendering (`renderWithin`, `discordParts`), not here.
          maxChars: Number.MAX_SAFE_INTEGER,
          minEditIntervalMs: DISCORD_LIMITS.minEditIntervalMs,
          gate,
          gateKey: channelId,
          now,
          logger,
          finalAttempts: FINAL_ATTEMPTS,
          platform: 'discord',
        });
      const reply = partedReply({
        // Set when the outbox finishes a reply that streamed into a message already.
        first: editReply({ placeholderId: target.replyTo.placeholderId, replyToMessageId: target.replyTo.messageId }),
        next: (replyToMessageId) => editReply({ replyToMessageId }),
        parts: (markdown) => discordParts(markdown, maxMessageChars),
      });
      return {
        update: (text) => reply.update(text),
        finish: (text) => reply.finish(text).finally(() => typing.stop(channelId)),
        abandon: () => {
          reply.abandon();
          typing.stop(channelId);
        },
        resumeAnchor: () => reply.resumeAnchor(),
        finalLeft: () => reply.finalLeft(),
      };
    },
  };
}

/** Runs `request`, trying again after each of {@link UNAVAILABLE_RETRY_DELAYS_MS} while Discord does not answer. */
async function retryUnanswered<T>(request: () => Promise<T>, sleep: Sleep): Promise<T> {
  for (const delayMs of UNAVAILABLE_RETRY_DELAYS_MS) {
    try {
      return await request();
    } catch (error) {
      if (!(error instanceof ChannelError) || error.code !== 'CHANNEL_UNAVAILABLE') throw error;
      await sleep(delayMs);
    }
  }
  return request();
}
