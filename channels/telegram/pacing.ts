import type { RequestWindow } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';

/** Telegram's group and supergroup chat ids are negative; a private chat has the user's (positive) id. */
export function isGroupChatId(chatId: string): boolean {
  return Number(chatId) < 0;
}

/**
 * Telegram's "20 messages per minute to the same group", kept across every reply, placeholder
 * and file that goes to one group (each reply already spaces its own edits 3 s apart, but many
 * at once, such as schedules due together, would still burst). Edits count too: Telegram does
 * not say they don't. A send that does not fit now is not made: it fails as a rate limit with the
 * time until a place frees, which every sender handles as it handles Telegram's own 429 (a
 * partial is dropped, a final waits a little or goes to the outbox, a placeholder is skipped),
 * so the group never answers with a 429 of its own. Private chats pass straight through.
 */
export class GroupPacer {
  constructor(private readonly window: RequestWindow) {}

  async send<T>(chatId: string, request: () => Promise<T>): Promise<T> {
    if (!isGroupChatId(chatId)) return request();
    const attempt = await this.window.tryRun(chatId, request);
    if (attempt.ran) return attempt.value;
    throw new ChannelError('telegram', 'CHANNEL_RATE_LIMITED', "the group's message budget is spent for now", { retryAfterMs: attempt.retryAfterMs });
  }
}
