/**
 * WeCom AI bot numbers. Sources: the long-connection guide
 * (https://developer.work.weixin.qq.com/document/path/101463), the passive reply guide
 * (https://developer.work.weixin.qq.com/document/path/101031), reference §6.7 and the SDK
 * (`@wecom/aibot-node-sdk` 1.0.7, `dist/index.esm.js`).
 */
export const WECOM_LIMITS = {
  /**
   * `stream.content` and `markdown.content`: at most 20480 UTF-8 bytes (path/101031). Core counts
   * characters, so 5000 keeps even four-byte characters (emoji) inside it.
   */
  maxMessageChars: 5000,
  maxMessageBytes: 20_480,
  /**
   * Undocumented: the spacing of stream updates. WeCom shows the latest content of a stream; one
   * update a second keeps a reply fluid without flooding the connection's reply queue.
   */
  streamUpdateIntervalMs: 1000,
  /** A stream must be finished within 6 minutes of its first frame (errcode 846608 after). Third-party: CodeBuddy's WeCom setup guide. */
  streamLifetimeMs: 6 * 60 * 1000,
  /** Reference §6.7: outbound images at most 2 MiB (larger ones go as files). */
  maxImageUploadBytes: 2 * 1024 * 1024,
  /** Reference §6.7: outbound files at most 20 MiB. */
  maxFileUploadBytes: 20 * 1024 * 1024,
  /** SDK `uploadMedia`: 512 KiB chunks before base64, at most 100 of them. */
  uploadChunkBytes: 512 * 1024,
  maxUploadChunks: 100,
  /** Undocumented: inbound media size cap (the reference reads them whole); same as DingTalk's. */
  maxDownloadBytes: 50 * 1024 * 1024,
  /**
   * Undocumented: WeCom answers a rate limit with errcode 45009 and no retry-after; proactive
   * pushes are limited per minute (30/min, 1000/h, path/101463). This is how long the chat waits.
   */
  defaultRetryAfterMs: 2000,
  /**
   * How long a reply waits after the connection failed under it (closed, or a frame WeCom did not
   * acknowledge within the SDK's 5 s) before trying again: the SDK's first reconnect comes after 1 s.
   */
  reconnectWaitMs: 1500,
} as const;

/** WeCom errcodes the adapter acts on (observed; not in one documented table). */
export const WECOM_ERRCODES = {
  /** `api freq out of limit`. */
  rateLimited: 45009,
  /** `invalid req_id`: the callback's reply window is gone. */
  invalidReqId: 846605,
  /** `stream message update expired`: more than 6 minutes since the stream began. */
  streamExpired: 846608,
} as const;
