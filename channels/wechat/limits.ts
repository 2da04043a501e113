/**
 * WeChat (iLink bot API) numbers the adapter relies on. Tencent publishes no reference for the
 * iLink bot API; the sources are its own channel package `@tencent-weixin/openclaw-weixin@2.4.9`
 * (paths inside that package) and DeerFlow's `wechat.py` (reference §6.6).
 */
export const WECHAT_LIMITS = {
  /** Text per message: `outbound.textChunkLimit: 4000` in `src/channel.ts` of the package. */
  maxMessageChars: 4000,
  /** Reference §6.6 `max_inbound_image_bytes` default: 20 MiB. */
  maxInboundImageBytes: 20 * 1024 * 1024,
  /** Reference §10.2 `max_outbound_image_bytes` default: 20 MiB. */
  maxOutboundImageBytes: 20 * 1024 * 1024,
  /** Reference §6.6 `max_inbound_file_bytes` default: 50 MiB. */
  maxInboundFileBytes: 50 * 1024 * 1024,
  /** Reference §10.2 `max_outbound_file_bytes` default: 50 MiB. */
  maxOutboundFileBytes: 50 * 1024 * 1024,
  /** `getupdates` answers `errcode` (or `ret`) -14 when the bot token expired: `STALE_TOKEN_ERRCODE` in `src/api/session-guard.ts`. */
  sessionExpiredErrcode: -14,
  /** Client timeout of a long poll: the hold plus 5 s, at least 10 s (reference §6.6). */
  longPollSlackMs: 5000,
  minLongPollTimeoutMs: 10_000,
  /** Timeout of other API calls: `DEFAULT_API_TIMEOUT_MS` in `src/api/api.ts`. */
  apiTimeoutMs: 15_000,
  /** Undocumented: no rate-limit answer is known; a plain HTTP 429 without Retry-After waits this long. */
  defaultRetryAfterMs: 5000,
} as const;
