import { ChannelError } from '../errors.js';

export interface HttpFailureOptions {
  /** The answer's `Retry-After` header, in seconds. */
  retryAfter?: string | null | undefined;
  /** How long to wait when a rate limit comes without a usable `Retry-After`. */
  defaultRetryAfterMs: number;
  /** The platform said "slow down" in its own words too (DingTalk's `QpsLimit` codes); 429 always is. */
  isRateLimited?: boolean;
}

/**
 * A platform's HTTP failure as the `ChannelError` egress and the starter act on, for adapters that
 * call the platform with `fetch`: a rate limit waits out `Retry-After`, a refused credential is
 * `CHANNEL_UNAUTHORIZED`, a 5xx is worth trying again, anything else was refused. `message` names
 * the call and its status, never the body, a token or a URL's query.
 */
export function httpFailure(platform: string, status: number, message: string, options: HttpFailureOptions): ChannelError {
  if (status === 429 || options.isRateLimited === true) {
    const seconds = Number(options.retryAfter);
    const retryAfterMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : options.defaultRetryAfterMs;
    return new ChannelError(platform, 'CHANNEL_RATE_LIMITED', message, { retryAfterMs, status: 429 });
  }
  if (status === 401 || status === 403) return new ChannelError(platform, 'CHANNEL_UNAUTHORIZED', message, { status: 502 });
  if (status >= 500) return new ChannelError(platform, 'CHANNEL_UNAVAILABLE', message, { status: 502 });
  return new ChannelError(platform, 'CHANNEL_REJECTED', message, { status: 502 });
}
