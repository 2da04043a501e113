import { type RawFile, type REST, Routes } from 'discord.js';
import { toChannelError } from './errors.js';

/**
 * The REST calls the adapter makes, as typed one-liners over discord.js's `REST` (which owns
 * per-route buckets: it reads the `X-RateLimit-*` headers, waits out 429s and retries 5xx).
 * Sends go by channel id, never through discord.js's cache, so they work from any process and
 * while the gateway reconnects or re-identifies. Every call rejects with a `ChannelError`.
 */

/** Replies never ping anyone, whatever the model writes (reference §6.3 `AllowedMentions.none()`). */
const NO_PINGS = { parse: [] as string[] };

interface MessageResult {
  id: string;
}

interface ChannelResult {
  id: string;
}

export class DiscordApi {
  constructor(private readonly rest: REST) {}

  /**
   * Posts `content` (≤ 2000 characters), replying to `replyToMessageId` when given; resolves with
   * the new id. With `nonce` (≤ 25 characters) Discord answers a repeat of the same create with
   * the message it already made (`enforce_nonce`), so a retried send never posts twice.
   */
  async sendText(channelId: string, content: string, replyToMessageId?: string, nonce?: string): Promise<string> {
    const body = {
      content,
      allowed_mentions: NO_PINGS,
      ...referenceTo(replyToMessageId),
      ...(nonce === undefined ? {} : { nonce, enforce_nonce: true }),
    };
    const message = (await call(() => this.rest.post(Routes.channelMessages(channelId), { body }))) as MessageResult;
    return message.id;
  }

  /** Replaces a message's content. */
  async editText(channelId: string, messageId: string, content: string): Promise<void> {
    await call(() => this.rest.patch(Routes.channelMessage(channelId, messageId), { body: { content, allowed_mentions: NO_PINGS } }));
  }

  /** Posts one file as an attachment (multipart), replying to `replyToMessageId` when given. */
  async sendFile(channelId: string, file: RawFile, replyToMessageId?: string): Promise<string> {
    const body = { attachments: [{ id: 0, filename: file.name }], allowed_mentions: NO_PINGS, ...referenceTo(replyToMessageId) };
    const message = (await call(() => this.rest.post(Routes.channelMessages(channelId), { body, files: [file] }))) as MessageResult;
    return message.id;
  }

  /** Adds our reaction `emoji` (a unicode emoji) to a message. */
  async react(channelId: string, messageId: string, emoji: string): Promise<void> {
    await call(() => this.rest.put(Routes.channelMessageOwnReaction(channelId, messageId, encodeURIComponent(emoji))));
  }

  /** Shows "<bot> is typing…" in a channel for 10 s or until we post. */
  async typing(channelId: string): Promise<void> {
    await call(() => this.rest.post(Routes.channelTyping(channelId)));
  }

  /** Starts a public thread from a message; resolves with the thread id (Discord gives it the message's id). */
  async startThread(channelId: string, messageId: string, name: string): Promise<string> {
    const body = { name, auto_archive_duration: 1440 };
    const thread = (await call(() => this.rest.post(Routes.threads(channelId, messageId), { body }))) as ChannelResult;
    return thread.id;
  }

  /** A message as Discord has it now (fresh attachment URLs). */
  async getMessage(channelId: string, messageId: string): Promise<{ attachments: { id: string; url: string; size: number }[] }> {
    return (await call(() => this.rest.get(Routes.channelMessage(channelId, messageId)))) as {
      attachments: { id: string; url: string; size: number }[];
    };
  }
}

function referenceTo(messageId: string | undefined): Record<string, unknown> {
  // fail_if_not_exists false: the answer still arrives when the question was deleted meanwhile.
  return messageId === undefined ? {} : { message_reference: { message_id: messageId, fail_if_not_exists: false } };
}

async function call<T>(request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw toChannelError(error);
  }
}
