/**
 * Telegram ids in core's words (reference §3.3). Chat and message ids are integers (group and
 * supergroup chat ids are negative); core carries them as decimal strings.
 */

export type TelegramChatType = 'private' | 'group' | 'supergroup' | 'channel';

/** The fields of a Telegram `Message` that decide its conversation. */
export interface TopicSource {
  chatType: TelegramChatType;
  messageId: number;
  /** `reply_to_message.message_id`, when the message is a reply. */
  replyToMessageId?: number;
}

export function isPrivateChatType(chatType: TelegramChatType): boolean {
  return chatType === 'private';
}

/**
 * The conversation key suffix: none in a private chat (one conversation per chat); in groups
 * the replied-to message id when the message is a reply, else the message's own id, so every
 * top-level group message starts a conversation and replies to it continue that one.
 */
export function topicIdFor(source: TopicSource): string | undefined {
  if (isPrivateChatType(source.chatType)) return undefined;
  return String(source.replyToMessageId ?? source.messageId);
}

const INTEGER = /^-?\d+$/;

/**
 * Parses a chat or message id that core carried as a string back into Telegram's integer.
 *
 * @throws RangeError when `id` is not a safe decimal integer.
 */
export function parseTelegramId(id: string): number {
  const value = Number(id);
  if (!INTEGER.test(id) || !Number.isSafeInteger(value)) throw new RangeError(`not a Telegram id: ${id}`);
  return value;
}
