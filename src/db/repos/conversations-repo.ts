import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../index.js';
import { channelConversations } from '../schema/index.js';

/**
 * A bound person's conversation: one chat, or one topic inside it, seen through one connection
 * (reference §8.2 `channel_conversations`), so two bound people in one group get separate threads.
 */
export interface BoundConversationKey {
  connectionId: string;
  chatId: string;
  topicId?: string | undefined;
}

/** Bound conversation → agent thread id; the counterpart of `ThreadMapRepo` for unbound chats. */
export class ConversationsRepo {
  constructor(private readonly db: Database) {}

  /** The conversation's thread id, or undefined when it has none yet. */
  async find(key: BoundConversationKey): Promise<string | undefined> {
    const [row] = await this.db
      .select({ threadId: channelConversations.threadId })
      .from(channelConversations)
      .where(this.where(key));
    return row?.threadId;
  }

  /** Records the mapping unless one exists; returns the thread id that won (the existing one after a lost race). */
  async insertIfAbsent(key: BoundConversationKey, threadId: string): Promise<string> {
    const inserted = await this.db
      .insert(channelConversations)
      .values({ connectionId: key.connectionId, chatId: key.chatId, topicId: key.topicId ?? '', threadId })
      .onConflictDoNothing()
      .returning({ threadId: channelConversations.threadId });
    return inserted[0]?.threadId ?? ((await this.find(key)) as string);
  }

  /** Points the conversation at a new thread (`/new`). */
  async replace(key: BoundConversationKey, threadId: string): Promise<void> {
    await this.db
      .insert(channelConversations)
      .values({ connectionId: key.connectionId, chatId: key.chatId, topicId: key.topicId ?? '', threadId })
      .onConflictDoUpdate({
        target: [channelConversations.connectionId, channelConversations.chatId, channelConversations.topicId],
        set: { threadId, updatedAt: sql`now()` },
      });
  }

  private where(key: BoundConversationKey) {
    return and(
      eq(channelConversations.connectionId, key.connectionId),
      eq(channelConversations.chatId, key.chatId),
      eq(channelConversations.topicId, key.topicId ?? ''),
    );
  }
}
