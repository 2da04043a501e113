import { DISCORD_LIMITS } from './limits.js';

/**
 * Discord ids and names, pure. Conversation keys (reference §3.3, adapted; see README "Ids"):
 * `chatId` is the Discord channel the message was posted in and the reply goes to (a DM, a
 * server text channel, or a thread); `topicId` is absent in DMs, the thread id inside a thread,
 * and the root message id in a server channel.
 */

/** Discord's epoch, 2015-01-01T00:00:00Z. https://discord.com/developers/docs/reference#snowflakes */
const DISCORD_EPOCH_MS = 1_420_070_400_000n;

/**
 * When the object with snowflake `id` was made, ms since the epoch.
 *
 * @throws SyntaxError when `id` is not a decimal integer.
 */
export function snowflakeTimeMs(id: string): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH_MS);
}

/** Matches `<@ID>` and the legacy nickname form `<@!ID>`. */
function mentionPattern(userId: string): RegExp {
  return new RegExp(`<@!?${userId}>`, 'g');
}

/** Whether `content` mentions `userId` anywhere (reference §6.3). */
export function mentionsUser(content: string, userId: string): boolean {
  return mentionPattern(userId).test(content);
}

/** `deerflow-<author display name>-<message id>`, cut to Discord's 100 characters (reference §6.3). */
export function threadNameFor(authorName: string, messageId: string): string {
  return `deerflow-${authorName}-${messageId}`.slice(0, DISCORD_LIMITS.maxThreadNameChars);
}

/** The workspace of a DM, for dedupe keys (Discord's own name for "no guild" in URLs). */
export const DM_WORKSPACE_ID = '@me';
