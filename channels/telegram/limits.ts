/**
 * Telegram Bot API numbers the adapter relies on. Telegram does not publish exact rate limits
 * ("They are unspecified", https://grammy.dev/advanced/flood); the intervals are budgets from
 * its Bot FAQ, and the server's `retry_after` always wins over them.
 */
export const TELEGRAM_LIMITS = {
  /** `sendMessage` / `editMessageText` text: 1-4096 characters after entity parsing (UTF-16 units). https://core.telegram.org/bots/api#sendmessage */
  maxMessageChars: 4096,
  /** "avoid sending more than one message per second" in one chat. https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this */
  privateEditIntervalMs: 1000,
  /** "not able to send more than 20 messages per minute to the same group" (one per 3 s). Same FAQ. */
  groupEditIntervalMs: 3000,
  /** The same FAQ line, across everything sent to one group: 20 messages in any minute. */
  groupMessagesPerMinute: 20,
  /** `getFile`: "bots can download files of up to 20MB in size". https://core.telegram.org/bots/api#getfile */
  maxDownloadBytes: 20_000_000,
  /** Documents and other media: "up to 50 MB". https://core.telegram.org/bots/api#senddocument */
  maxUploadBytes: 50_000_000,
  /** `sendPhoto`: "The photo must be at most 10 MB in size"; bigger images go as documents. https://core.telegram.org/bots/api#sendphoto */
  maxPhotoBytes: 10_000_000,
} as const;
