/**
 * Discord numbers the adapter relies on. Per-route rate limits are not published as numbers
 * ("rate limits should not be hard coded"); discord.js reads the bucket headers and waits, and
 * the intervals here are our own budget beneath them.
 */
export const DISCORD_LIMITS = {
  /** Message `content`: "up to 2000 characters". https://discord.com/developers/docs/resources/message#create-message */
  maxMessageChars: 2000,
  /**
   * Our spacing of edits to one reply. Undocumented: message create/edit share a per-channel
   * bucket historically of 5 per 5 s (https://github.com/discord/discord-api-docs/issues/20);
   * 1.2 s leaves room for the acknowledgement, the final and a second reply in the channel.
   */
  minEditIntervalMs: 1200,
  /**
   * Editing a message older than an hour counts against a separate, small budget (error 30046,
   * "Maximum number of edits to messages older than 1 hour reached"). We post anew instead.
   * https://discord.com/developers/docs/topics/opcodes-and-status-codes#json
   */
  editWindowMs: 60 * 60 * 1000,
  /** Uploads: "The default limit is 10 MiB for all users" per file. https://discord.com/developers/docs/reference#uploading-files */
  maxUploadBytes: 10 * 1024 * 1024,
  /** Our cap on one inbound attachment (Nitro users may send up to 500 MB); larger ones are skipped. */
  maxDownloadBytes: 25 * 1024 * 1024,
  /** Thread names: 1-100 characters. https://discord.com/developers/docs/resources/channel#start-thread-from-message */
  maxThreadNameChars: 100,
  /** "Generally bots should not use this route"; it shows for 10 s, so we renew within that. https://discord.com/developers/docs/resources/channel#trigger-typing-indicator */
  typingRenewMs: 8000,
  /** Our bound on showing "typing" for one message that has no reply yet. */
  maxTypingMs: 120_000,
} as const;
