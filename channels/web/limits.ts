/**
 * Numbers of the web chat, ours to choose: it is the server's own page, so they trade what a
 * browser shows against what the server spends.
 */
export const WEB_LIMITS = {
  /** One message holds any answer the model writes: the page scrolls, it never splits. */
  maxMessageChars: 1_000_000,
  /** The longest text a person may send in one message, in characters. */
  maxInboundChars: 100_000,
  /** Partials reach open pages at most this often per reply: smooth to read, few frames to send. */
  partialIntervalMs: 50,
  /** Files one message may carry. */
  maxFilesPerMessage: 10,
  /** Conversations the list shows, the most recent first. */
  listedConversations: 100,
  /** Messages one page of a transcript holds. */
  transcriptPage: 500,
  /** A page's open event stream looks at the database this often, for what a lost live event left out. */
  eventStreamRecheckMs: 5_000,
  /** Comment lines keep idle event streams open through proxies. */
  eventStreamKeepAliveMs: 15_000,
} as const;
