/**
 * Slack numbers the adapter relies on (`/work/shared/reference/platform-limits.md` §2). Slack's
 * `Retry-After` always wins over these budgets.
 */
export const SLACK_LIMITS = {
  /**
   * One message's text, as we split it. Slack truncates `text` above 40,000 characters
   * (https://api.slack.com/changelog/2018-04-truncating-really-long-messages) and recommends
   * staying under 4,000 (https://docs.slack.dev/reference/methods/chat.postMessage "Truncating
   * content"). Rendering to mrkdwn can grow text (`&` → `&amp;`), at most 5×: still under 40,000.
   */
  maxMessageChars: 4000,
  /** `markdown_text` of chat.startStream/appendStream/stopStream: "Limit this field to 12,000 characters". */
  maxStreamChars: 12_000,
  /**
   * `chat.update` is Tier 3: 50+ per minute per method per workspace, shared by every channel
   * (https://docs.slack.dev/apis/web-api/rate-limits). One edit per 1200 ms for the workspace.
   */
  workspaceUpdateIntervalMs: 1200,
  /** Native stream appends are Tier 4 (100+/min); the SDK's ChatStreamer buffers 256 characters per call. */
  streamAppendIntervalMs: 600,
  /**
   * Inbound files we download. Slack documents no download limit; we cap at 50 MB (the
   * server's per-file budget, like Telegram's upload limit). Undocumented: Slack's own cap is
   * reportedly 1 GB.
   */
  maxDownloadBytes: 50_000_000,
  /** Outbound files. Undocumented: Slack's cap is commonly quoted as 1 GB; we keep uploads to 50 MB. */
  maxUploadBytes: 50_000_000,
  /**
   * Slack sends an event it got no acknowledgement for (HTTP 2xx, or the envelope's ack in Socket
   * Mode) again 3 times: nearly at once, after a minute, after five (platform-limits.md §2.2).
   * The retry number (`X-Slack-Retry-Num`, `retry_attempt`) counts them.
   */
  eventRetries: 3,
  /** How long one 429 may make a final wait before it gives up, in ms (bounds `Retry-After`). */
  maxRetryAfterMs: 60_000,
} as const;
