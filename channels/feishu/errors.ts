import { ChannelError } from '../../src/errors.js';
import { FEISHU_CODES } from './limits.js';

const PLATFORM = 'feishu';
/** Undocumented: a rate limit should carry `x-ogw-ratelimit-reset`; wait this long if not. */
const DEFAULT_RETRY_AFTER_MS = 1000;

/** What the SDK throws on a non-2xx (an axios error), read by shape, never by class. */
interface AxiosLike {
  response?: { status?: number; data?: { code?: unknown }; headers?: Record<string, unknown> };
  code?: unknown;
}

/** Feishu's business `code` in a thrown SDK error or a `ChannelError` made here; undefined if none. */
export function feishuCodeOf(error: unknown): number | undefined {
  if (error instanceof ChannelError) {
    const code = (error.cause as { feishuCode?: unknown } | undefined)?.feishuCode;
    return typeof code === 'number' ? code : undefined;
  }
  const code = (error as AxiosLike | null)?.response?.data?.code;
  return typeof code === 'number' ? code : undefined;
}

export function isTokenInvalid(error: unknown): boolean {
  const code = feishuCodeOf(error);
  return code !== undefined && FEISHU_CODES.tokenInvalid.includes(code);
}

/** A `ChannelError` for an answer with `code !== 0` (HTTP 200 or not). */
export function rejected(method: string, code: number, status?: number, resetSeconds?: number): ChannelError {
  if (code === FEISHU_CODES.rateLimited || code === FEISHU_CODES.sendFrequencyLimited || status === 429) {
    const retryAfterMs = resetSeconds !== undefined && Number.isFinite(resetSeconds) ? Math.max(resetSeconds, 0) * 1000 : DEFAULT_RETRY_AFTER_MS;
    return new ChannelError(PLATFORM, 'CHANNEL_RATE_LIMITED', `Feishu ${method} rate limited (${code})`, { status: 502, retryAfterMs, cause: { method, feishuCode: code } });
  }
  const errorCode = FEISHU_CODES.tokenInvalid.includes(code) || code === 10014 || code === 10003 ? 'CHANNEL_UNAUTHORIZED' : 'CHANNEL_REJECTED';
  return new ChannelError(PLATFORM, errorCode, `Feishu ${method} failed (code ${code})`, { status: 502, cause: { method, feishuCode: code } });
}

/**
 * Translates what the SDK threw into a `ChannelError` (one passes through): code 99991400 / HTTP
 * 429 → `CHANNEL_RATE_LIMITED` with `retryAfterMs` from `x-ogw-ratelimit-reset`; token codes →
 * `CHANNEL_UNAUTHORIZED`; other answers → `CHANNEL_REJECTED`; no answer → `CHANNEL_UNAVAILABLE`.
 * Messages carry codes only, never text, tokens or payloads.
 */
export function toChannelError(error: unknown, method: string): ChannelError {
  if (error instanceof ChannelError) return error;
  const axios = (error ?? {}) as AxiosLike;
  const status = axios.response?.status;
  if (status === undefined) {
    return new ChannelError(PLATFORM, 'CHANNEL_UNAVAILABLE', `Feishu unreachable (${method})`, { status: 502, cause: { method } });
  }
  const code = feishuCodeOf(error);
  const reset = Number(axios.response?.headers?.['x-ogw-ratelimit-reset']);
  if (code === undefined && status !== 429) {
    return new ChannelError(PLATFORM, 'CHANNEL_UNAVAILABLE', `Feishu ${method} failed (HTTP ${status})`, { status: 502, cause: { method, status } });
  }
  return rejected(method, code ?? FEISHU_CODES.rateLimited, status, Number.isFinite(reset) ? reset : undefined);
}
