import type { Api } from 'grammy';
import { createEditReply, type EditPrimitives } from '../../src/channel/edit-reply.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelEgress, Reply, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { isMessageNotModified, toChannelError } from './errors.js';
import { parseTelegramId } from './ids.js';
import { TELEGRAM_LIMITS } from './limits.js';
import type { GroupPacer } from './pacing.js';

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

/**
 * Sends plain `text` to a chat, as a reply to `replyToMessageId` when given (still sent if that
 * message was deleted meanwhile). Resolves with the new message id.
 *
 * @throws ChannelError (see `toChannelError`).
 */
export async function sendTelegramText(api: Api, chatId: number, text: string, replyToMessageId?: string): Promise<string> {
  try {
    const message = await api.sendMessage(
      chatId,
      text,
      replyToMessageId === undefined
        ? {}
        : { reply_parameters: { message_id: parseTelegramId(replyToMessageId), allow_sending_without_reply: true } },
    );
    return String(message.message_id);
  } catch (error) {
    throw toChannelError(error);
  }
}

/**
 * Replaces a message's text. Telegram's "message is not modified" (identical text) counts as
 * success.
 *
 * @throws ChannelError (see `toChannelError`).
 */
export async function editTelegramText(api: Api, chatId: number, messageId: string, text: string): Promise<void> {
  try {
    await api.editMessageText(chatId, parseTelegramId(messageId), text);
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
 * (Telegram's per-chat budgets); the final text is split at 4096 characters. `reply()` throws a
 * `ChannelError` (`CHANNEL_REJECTED`) when `target.chatId` is not a Telegram chat id.
 */
export function createTelegramEgress(options: TelegramEgressOptions): ChannelEgress {
  const { api, gate, pacer, logger, now } = options;
  return {
    reply(target: ReplyTarget): Reply {
      const chatId = toTelegramChatId(target.chatId);
      const primitives: EditPrimitives = {
        send: (text, replyToMessageId) => pacer.send(target.chatId, () => sendTelegramText(api, chatId, text, replyToMessageId)),
        edit: (messageId, text) => pacer.send(target.chatId, () => editTelegramText(api, chatId, messageId, text)),
        remove: async (messageId) => {
          try {
            await api.deleteMessage(chatId, parseTelegramId(messageId));
          } catch (error) {
            throw toChannelError(error);
          }
        },
      };
      return createEditReply(primitives, {
        placeholderId: target.replyTo.placeholderId,
        replyToMessageId: target.replyTo.messageId,
        maxChars: TELEGRAM_LIMITS.maxMessageChars,
        minEditIntervalMs: target.isPrivateChat
          ? TELEGRAM_LIMITS.privateEditIntervalMs
          : TELEGRAM_LIMITS.groupEditIntervalMs,
        gate,
        gateKey: target.chatId,
        now,
        logger,
        finalAttempts: FINAL_ATTEMPTS,
        maxFinalWaitMs: MAX_FINAL_WAIT_MS,
        platform: 'telegram',
      });
    },
  };
}
