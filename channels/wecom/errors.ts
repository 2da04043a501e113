import { ChannelError } from '../../src/errors.js';
import { WECOM_ERRCODES, WECOM_LIMITS } from './limits.js';

/** An ack frame with an error: the SDK rejects a reply with the frame itself, not an `Error`. */
interface ErrorFrame {
  errcode: number;
  errmsg?: string;
}

function isErrorFrame(value: unknown): value is ErrorFrame {
  return typeof value === 'object' && value !== null && typeof (value as { errcode?: unknown }).errcode === 'number';
}

/**
 * A rejected SDK call as a `ChannelError`: errcode 45009 is a rate limit (WeCom gives no
 * retry-after, so the chat waits `defaultRetryAfterMs`), other errcodes are refusals, and an
 * `Error` (socket closed, ack timeout) means WeCom could not be reached. `what` names the call,
 * never its content.
 */
export function toChannelError(error: unknown, what: string): ChannelError {
  if (error instanceof ChannelError) return error;
  if (isErrorFrame(error)) {
    if (error.errcode === WECOM_ERRCODES.rateLimited) {
      return new ChannelError('wecom', 'CHANNEL_RATE_LIMITED', `WeCom ${what} rate limited (errcode ${error.errcode})`, {
        retryAfterMs: WECOM_LIMITS.defaultRetryAfterMs,
        status: 429,
      });
    }
    return new ChannelError('wecom', 'CHANNEL_REJECTED', `WeCom refused ${what} (errcode ${error.errcode})`, { status: 502 });
  }
  return new ChannelError('wecom', 'CHANNEL_UNAVAILABLE', `WeCom ${what} failed: no answer on the long connection`, {
    cause: error,
    status: 502,
    retryAfterMs: WECOM_LIMITS.reconnectWaitMs,
  });
}
