import type { Api } from 'grammy';
import { createEditReply, type EditPrimitives } from '../../src/channel/edit-reply.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelEgress, Reply, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { isCantParseEntities, isMessageNotModified, toChannelError } from './errors.js';
import { parseTelegramId } from './ids.js';
import { TELEGRAM_LIMITS } from './limits.js';
import type { GroupPacer } from './pacing.js';
import { renderWithinOneMessage, type TelegramMessageText } from './render.js';
import { createTelegramReply } from './reply.js';

/** Attempts per final message while Telegram answers 429 (each waits out `retry_after`). */
const FINAL_ATTEMPTS = 5;
/** A longer `retry_after` leaves the final to the outbox instead of holding a worker (issue #15). */
const MAX_FINAL_WAIT_MS = 5000;

/**
 * A chat id core carried back, as Telegram's integer.
 *
 * @throws ChannelError `CHANNEL_REJECTED` when `chatId` is not a Telegram chat id.
 */
export function toTelegramChatId(chatId: string): number {
  try {
    return parseTelegramId(chatId);
  } catch (error) {
    throw new ChannelError('telegram', 'CHANNEL_REJECTED', 'reply target is not a Telegram chat id', { cause: error });
  }
}

function replyParameters(replyToMessageId: string | undefined) {
  return replyToMessageId === undefined
    ? {}
    : { reply_parameters: { message_id: parseTelegramId(replyToMessageId), allow_sending_without_reply: true } };
}

/**
 * Sends plain `text` to a chat, without a parse mode, so it shows exactly as written; as a reply
 * to `replyToMessageId` when given (still sent if that message was deleted meanwhile). Resolves
 * with the new message id.
 *
 * @throws ChannelError (see `toChannelError`).
 */
export async function sendTelegramText(api: Api, chatId: number, text: string, replyToMessageId?: string): Promise<string> {
  try {
    const message = await api.sendMessage(chatId, text, replyParameters(replyToMessageId));
    return String(message.message_id);
  } catch (error) {
    throw toChannelError(error);
  }
}

/**
 * Runs `request` with the HTML; if Telegram still refuses it (`can't parse entities`, which the
 * renderer should never cause), once more with the plain text, so the person gets the answer
 * unformatted rather than not at all.
 */
async function withPlainTextFallback<T>(text: TelegramMessageText, logger: Logger, request: (text: string, isHtml: boolean) => Promise<T>): Promise<T> {
  try {
    return await request(text.html, true);
  } catch (error) {
    if (!isCantParseEntities(error)) throw error;
    logger.warn({ err: describeError(toChannelError(error)) }, 'Telegram refused the rendered HTML; sending the text unformatted');
    return request(text.plainText, false);
  }
}

/**
 * Sends rendered text to a chat in parse mode HTML (plain text if Telegram refuses the HTML), as
 * a reply to `replyToMessageId` when given. Resolves with the new message id.
 *
 * @throws ChannelError (see `toChannelError`).
 */
export async function sendTelegramMessage(api: Api, chatId: number, text: TelegramMessageText, logger: Logger, replyToMessageId?: string): Promise<string> {
  try {
    const message = await withPlainTextFallback(text, logger, (body, isHtml) =>
      api.sendMessage(chatId, body, { ...replyParameters(replyToMessageId), ...(isHtml ? { parse_mode: 'HTML' as const } : {}) }),
    );
    return String(message.message_id);
  } catch (error) {
    throw toChannelError(error);
  }
}

/**
 * Replaces a message's text with rendered text, as {@link sendTelegramMessage} sends it.
 * Telegram's "message is not modified" (the same text and formatting) counts as success.
 *
 * @throws ChannelError (see `toChannelError`).
 */
export async function editTelegramMessage(api: Api, chatId: number, messageId: string, text: TelegramMessageText, logger: Logger): Promise<void> {
  try {
    await withPlainTextFallback(text, logger, (body, isHtml) =>
      api.editMessageText(chatId, parseTelegramId(messageId), body, isHtml ? { parse_mode: 'HTML' } : {}),
    );
  } catch (error) {
    if (isMessageNotModified(error)) return;
    throw toChannelError(error);
  }
}

export interface TelegramEgressOptions {
  api: Api;
  /** Shared with ingress, keyed by chat id: a 429 anywhere holds every send to that chat. */
  gate: RateGate;
  /** Every message and edit to a group takes a place of its 20 a minute (shared with ingress and files). */
  pacer: GroupPacer;
  logger: Logger;
  now: () => number;
}

/**
 * Replies stream by editing one message: the placeholder ingress posted, else a new message
 * replying to the user's. Edits are spaced 1 s apart in private chats and 3 s in groups
 * (Telegram's per-chat budgets). Every text, partial or final, is the agent's Markdown rendered
 * once into HTML (`render.ts`); the final is split into parts that each render within 4096
 * characters (`createTelegramReply`). `reply()` throws a `ChannelError` (`CHANNEL_REJECTED`)
 * when `target.chatId` is not a Telegram chat id.
 */
export function createTelegramEgress(options: TelegramEgressOptions): ChannelEgress {
  const { api, gate, pacer, logger, now } = options;
  return {
    reply(target: ReplyTarget): Reply {
      const chatId = toTelegramChatId(target.chatId);
      // Each text the reply hands over is Markdown that fits one message (a final's part) or a partial to cut.
      const primitives: EditPrimitives = {
        send: (markdown, replyToMessageId) =>
          pacer.send(target.chatId, () => sendTelegramMessage(api, chatId, renderWithinOneMessage(markdown), logger, replyToMessageId)),
        edit: (messageId, markdown) => pacer.send(target.chatId, () => editTelegramMessage(api, chatId, messageId, renderWithinOneMessage(markdown), logger)),
        remove: async (messageId) => {
          try {
            await api.deleteMessage(chatId, parseTelegramId(messageId));
          } catch (error) {
            throw toChannelError(error);
          }
        },
      };
      return createTelegramReply((anchor) =>
        createEditReply(primitives, {
          ...anchor,
          // Lengths are the renderer's to keep: it counts the text Telegram shows, not the Markdown.
          maxChars: Number.MAX_SAFE_INTEGER,
          minEditIntervalMs: target.isPrivateChat ? TELEGRAM_LIMITS.privateEditIntervalMs : TELEGRAM_LIMITS.groupEditIntervalMs,
          gate,
          gateKey: target.chatId,
          now,
          logger,
          finalAttempts: FINAL_ATTEMPTS,
          maxFinalWaitMs: MAX_FINAL_WAIT_MS,
          platform: 'telegram',
        }),
        { placeholderId: target.replyTo.placeholderId, replyToMessageId: target.replyTo.messageId },
      );
    },
  };
}
