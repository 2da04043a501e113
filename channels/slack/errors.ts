import { ChannelError, type ErrorCode } from '../../src/errors.js';

const PLATFORM = 'slack';
/** Undocumented: a 429 should always carry Retry-After; wait this long if one does not. */
const DEFAULT_RETRY_AFTER_MS = 1000;

/** Slack error codes meaning the token is bad (https://docs.slack.dev/reference/methods/auth.test). */
const AUTH_ERRORS = new Set(['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'token_expired', 'no_permission']);
/** Slack error codes meaning "slow down"; Retry-After (if any) says for how long. */
const RATE_ERRORS = new Set(['ratelimited', 'rate_limited']);

/** What @slack/web-api throws, by its documented `code` (not by class: the SDK may be duplicated). */
interface SdkError {
  code?: unknown;
  data?: { error?: unknown };
  retryAfter?: unknown;
  statusCode?: unknown;
  headers?: Record<string, string>;
}

/** Slack's `error` string when `error` is a platform (`ok:false`) error, else `undefined`. */
export function slackErrorCode(error: unknown): string | undefined {
  const sdk = error as SdkError | null;
  if (sdk?.code === 'slack_webapi_platform_error' && typeof sdk.data?.error === 'string') return sdk.data.error;
  if (error instanceof ChannelError && typeof (error.cause as { slackError?: unknown } | undefined)?.slackError === 'string') {
    return (error.cause as { slackError: string }).slackError;
  }
  return undefined;
}

/**
 * Translates what @slack/web-api threw into a `ChannelError` (a `ChannelError` passes through):
 * a rate limit (`slack_webapi_rate_limited_error`, HTTP 429, `ratelimited`) → `CHANNEL_RATE_LIMITED`
 * with `retryAfterMs`; `invalid_auth` and friends → `CHANNEL_UNAUTHORIZED`; other `ok:false`
 * answers → `CHANNEL_REJECTED`; network and HTTP failures → `CHANNEL_UNAVAILABLE`. `method`
 * names the call. Messages carry Slack's error code only: never text, tokens or payloads.
 */
export function toChannelError(error: unknown, method = 'call'): ChannelError {
  if (error instanceof ChannelError) return error;
  const sdk = (error ?? {}) as SdkError;
  if (sdk.code === 'slack_webapi_rate_limited_error') {
    const seconds = typeof sdk.retryAfter === 'number' ? sdk.retryAfter : undefined;
    return rateLimited(method, seconds === undefined ? DEFAULT_RETRY_AFTER_MS : seconds * 1000);
  }
  if (sdk.code === 'slack_webapi_platform_error') {
    const slackError = String(sdk.data?.error ?? 'unknown_error');
    if (RATE_ERRORS.has(slackError)) return rateLimited(method, DEFAULT_RETRY_AFTER_MS);
    const code: ErrorCode = AUTH_ERRORS.has(slackError) ? 'CHANNEL_UNAUTHORIZED' : 'CHANNEL_REJECTED';
    return new ChannelError(PLATFORM, code, `Slack ${method} failed (${slackError})`, { status: 502, cause: { method, slackError } });
  }
  if (sdk.code === 'slack_webapi_http_error') {
    const status = Number(sdk.statusCode);
    if (status === 429) {
      const seconds = Number(sdk.headers?.['retry-after']);
      return rateLimited(method, Number.isFinite(seconds) ? seconds * 1000 : DEFAULT_RETRY_AFTER_MS);
    }
    return new ChannelError(PLATFORM, 'CHANNEL_UNAVAILABLE', `Slack ${method} failed (HTTP ${status})`, { status: 502, cause: { method, status } });
  }
  if (sdk.code === 'slack_webapi_request_error') {
    return new ChannelError(PLATFORM, 'CHANNEL_UNAVAILABLE', `Slack unreachable (${method})`, { status: 502, cause: { method } });
  }
  const name = error instanceof Error ? error.name : typeof error;
  return new ChannelError(PLATFORM, 'CHANNEL_UNAVAILABLE', `Slack ${method} failed (${name})`, { status: 502, cause: { method, name } });
}

function rateLimited(method: string, retryAfterMs: number): ChannelError {
  return new ChannelError(PLATFORM, 'CHANNEL_RATE_LIMITED', `Slack ${method} rate limited`, {
    status: 502,
    retryAfterMs,
    cause: { method, slackError: 'ratelimited' },
  });
}

/** Why the channel is not running, for `status().reason`: secret-free, for an operator. */
export function notRunningReason(error: unknown): string {
  const channelError = toChannelError(error, 'start');
  if (channelError.code === 'CHANNEL_UNAUTHORIZED') return `Slack rejected a token (${slackErrorCode(error) ?? 'invalid_auth'})`;
  return `Slack start-up failed: ${channelError.message}`;
}
