/**
 * Feishu/Lark numbers the adapter relies on (`/work/shared/reference/platform-limits.md` §4).
 * A rate-limit answer (HTTP 429, code 99991400, `x-ogw-ratelimit-reset`) always wins over these.
 */
export const FEISHU_LIMITS = {
  /**
   * Characters of one card's markdown. A card (its JSON, sent as a JSON string inside the request
   * body) must stay under 30 KB (https://open.feishu.cn/document/server-docs/im-v1/message/create);
   * 6000 UTF-16 units are at most 18,000 UTF-8 bytes plus escaping, well under it.
   */
  maxMessageChars: 6000,
  /** PATCH of one interactive card: "5 QPS per message" (im/v1/message-card/patch); we stay at 4/s. */
  cardPatchIntervalMs: 250,
  /**
   * Sending to one chat: "5 QPS to the same user; 5 QPS to the same group, shared by all bots in
   * it" (im/v1/messages create). Patches count per message (5 QPS each), paced here as well.
   */
  sendsPerChatPerSecond: 5,
  /**
   * Each open API method, per app and tenant: "1000 次/分钟、50 次/秒" (message create, reply,
   * patch, and every CardKit endpoint; frequency-control doc). Hitting either one throttles.
   */
  appCallsPerMethod: [
    { name: 'api-second', perWindow: 50, windowMs: 1000 },
    { name: 'api-minute', perWindow: 1000, windowMs: 60_000 },
  ],
  /**
   * CardKit: "at most 10 card- or component-level operations per second per card entity"
   * (feishu-cards/streaming-updates-openapi-overview); we stream at most 8 a second.
   */
  cardkitUpdateIntervalMs: 125,
  /** Images out: 10 MiB (im/v1/images). */
  maxImageBytes: 10 * 1024 * 1024,
  /** Files out: 30 MiB (im/v1/files). */
  maxFileBytes: 30 * 1024 * 1024,
  /** Message resources in: we cap downloads at 30 MiB (Feishu's own cap is unconfirmed, often quoted as 100 MB). */
  maxDownloadBytes: 30 * 1024 * 1024,
  /**
   * An HTTP event callback not answered 200 is pushed again: 4 retries, once documented as after
   * 5 s, 5 min, 1 h and 6 h (platform-limits.md §4.2; the current intervals are unconfirmed). An
   * event younger than this has its early retries ahead of it, so a full intake refuses it; an
   * older one (the 5-minute retry on) is admitted, and told busy if still refused.
   */
  eventRetryWindowMs: 60_000,
  /** HTTP callbacks older or newer than this are refused (replay window). */
  callbackWindowMs: 5 * 60 * 1000,
  /** Longest wait the adapter honours for a final before giving up. */
  maxRetryAfterMs: 60_000,
} as const;

/** Feishu error codes (https://open.feishu.cn/document/server-docs/api-call-guide/generic-error-code). */
export const FEISHU_CODES = {
  rateLimited: 99991400,
  /** "Frequency limit" of message sending (5 QPS per user / per group), as a business code. */
  sendFrequencyLimited: 230020,
  /** Tenant access token invalid / expired: refresh and retry once. */
  tokenInvalid: [99991663, 99991661, 99991664, 99991668] as readonly number[],
} as const;
