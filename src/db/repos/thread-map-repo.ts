import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../index.js';
import { threadMappings } from '../schema/index.js';

/** A conversation: one chat, or one topic inside a chat (reference §3.3). */
export interface ConversationKey {
  channel: string;
  chatId: string;
  topicId?: string | undefined;
}

/** Conversation → agent thread id. */
export class ThreadMapRepo {
  constructor(private readonly db: Database) {}

  async find(key: ConversationKey): Promise<string | undefined> {
    const [row] = await this.db
      .select({ threadId: threadMappings.threadId })
      .from(threadMappings)
      .where(this.where(key));
    return row?.threadId;
  }

  /** Records the mapping unless one exists; returns the thread id that won. */
  async insertIfAbsent(key: ConversationKey, threadId: string, userId: string): Promise<string> {
    const inserted = await this.db
      .insert(threadMappings)
      .values({ channel: key.channel, chatId: key.chatId, topicId: key.topicId ?? '', threadId, userId })
      .onConflictDoNothing()
      .returning({ threadId: threadMappings.threadId });
    return inserted[0]?.threadId ?? ((await this.find(key)) as string);
  }

  /** Points the conversation at a new thread (`/new`). */
  async replace(key: ConversationKey, threadId: string, userId: string): Promise<void> {
    await this.db
      .insert(threadMappings)
      .values({ channel: key.channel, chatId: key.chatId, topicId: key.topicId ?? '', threadId, userId })
      .onConflictDoUpdate({
        target: [threadMappings.channel, threadMappings.chatId, threadMappings.topicId],
        set: { threadId, userId, updatedAt: sql`now()` },
      });
  }

  private where(key: ConversationKey) {
    return and(
      eq(threadMappings.channel, key.channel),
      eq(threadMappings.chatId, key.chatId),
      eq(threadMappings.topicId, key.topicId ?? ''),
    );
  }
}
