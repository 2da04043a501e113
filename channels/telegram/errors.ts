import { GrammyError, HttpError } from 'grammy';
import { ChannelError, type ErrorCode } from '../../src/errors.js';

const PLATFORM = 'telegram';
/** Undocumented: a 429 should always carry `retry_after`; wait this long if one does not. */
const DEFAULT_RETRY_AFTER_MS = 1000;

function codeFor(errorCode: number): ErrorCode {
  if (errorCode === 429) return 'CHANNEL_RATE_LIMITED';
  if (errorCode === 401) return 'CHANNEL_UNAUTHORIZED';
  if (errorCode === 400 || errorCode === 403) return 'CHANNEL_REJECTED';
  return 'CHANNEL_UNAVAILABLE';
}

/** Whether `error` is Telegram's answer to an edit that would not change the message. */
export function isMessageNotModified(error: unknown): boolean {
  return (
    error instanceof GrammyError && error.error_code === 400 && error.description.includes('message is not modified')
  );
}

/** Whether `error` is Telegram refusing a text's markup (`400 Bad Request: can't parse entities: …`). */
export function isCantParseEntities(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && error.description.includes("can't parse entities");
}

/**
 * Translates what grammY threw into a `ChannelError` (other values pass through when already
 * one): 429 → `CHANNEL_RATE_LIMITED` with `retryAfterMs` from `parameters.retry_after`;
 * 401 → `CHANNEL_UNAUTHORIZED`; 400/403 → `CHANNEL_REJECTED`; other answers, network failures
 * and unknown errors → `CHANNEL_UNAVAILABLE`.
 *
 * The message names the method, the error code and Telegram's description; the cause is a
 * summary of the same. Neither carries the request payload (message text) or the token.
 */
export function toChannelError(error: unknown): ChannelError {
  if (error instanceof ChannelError) return error;
  if (error instanceof GrammyError) {
    const retryAfterSeconds = error.parameters.retry_after;
    const isRateLimited = error.error_code === 429;
    return new ChannelError(
      PLATFORM,
      codeFor(error.error_code),
      `Telegram ${error.method} failed (${error.error_code}: ${error.description})`,
      {
        status: 502,
        cause: { method: error.method, errorCode: error.error_code, description: error.description },
        ...(isRateLimited
          ? { retryAfterMs: typeof retryAfterSeconds === 'number' ? retryAfterSeconds * 1000 : DEFAULT_RETRY_AFTER_MS }
          : {}),
      },
    );
  }
  if (error instanceof HttpError) {
    // grammY keeps the token out of HttpError messages unless `sensitiveLogs` is on (it is off).
    return new ChannelError(PLATFORM, 'CHANNEL_UNAVAILABLE', `Telegram unreachable: ${error.message}`, {
      status: 502,
      cause: { name: error.name, message: error.message },
    });
  }
  const name = error instanceof Error ? error.name : typeof error;
  return new ChannelError(PLATFORM, 'CHANNEL_UNAVAILABLE', `Telegram call failed (${name})`, {
    status: 502,
    cause: { name },
  });
}

/**
 * Why the channel is not running, for `status().reason`: secret-free, written for an operator.
 * `phase` says what was being done when `error` ended it.
 */
export function notRunningReason(error: unknown, phase: 'start' | 'polling'): string {
  if (error instanceof GrammyError && error.error_code === 409) {
    return 'Telegram refused polling: another poller or a webhook is using this bot token (409 Conflict)';
  }
  const channelError = toChannelError(error);
  if (channelError.code === 'CHANNEL_UNAUTHORIZED') return 'Telegram rejected the bot token (401 Unauthorized)';
  const what = phase === 'start' ? 'Telegram start-up failed' : 'Telegram polling stopped';
  return `${what}: ${channelError.message}`;
}
