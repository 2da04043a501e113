/**
 * DingTalk numbers (platform-limits §5). Most are not documented by DingTalk; each says where it
 * comes from.
 */
export const DINGTALK_LIMITS = {
  /** Undocumented: markdown/card text limit is UNCONFIRMED (§5.3); 5000 keeps well inside observed limits. */
  maxMessageChars: 5000,
  /** Non-final AI card updates per card (hermes-agent PR 17365, §5.1). */
  cardUpdateIntervalMs: 800,
  /** Reference §6.5: inbound file download cap. */
  maxDownloadBytes: 50 * 1024 * 1024,
  /** Reference §6.5: outbound file cap. */
  maxUploadBytes: 20 * 1024 * 1024,
  /** Reference §6.5: the token is refreshed this long before `expireIn` ends. */
  tokenEarlyRefreshMs: 5 * 60 * 1000,
  /** Reconnect backoff: exponential from 1 s to a 60 s cap, with jitter (§5.2). */
  reconnectMinMs: 1000,
  reconnectMaxMs: 60_000,
  /** Undocumented: wait on a QPS answer without a Retry-After header. */
  defaultRetryAfterMs: 1000,
} as const;

/** The acknowledgement text (reference §6.5). */
export const WORKING_TEXT = '⏳ Working on it...';
