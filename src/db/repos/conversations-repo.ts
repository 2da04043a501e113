import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../index.js';
import { channelConversations } from '../schema/index.js';
import { type ConversationRecord, type ConversationSettings, toConversationRecord } from './thread-map-repo.js';

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

  /** The conversation's mapping, or undefined when it has none yet. */
  async find(key: BoundConversationKey): Promise<ConversationRecord | undefined> {
    const [row] = await this.db
      .select({
        threadId: channelConversations.threadId,
        agentName: channelConversations.agentName,
        isBootstrapping: channelConversations.isBootstrapping,
      })
      .from(channelConversations)
      .where(this.where(key));
    return row === undefined ? undefined : toConversationRecord(row);
  }

  /** Records the mapping unless one exists; returns the mapping that won (the existing one after a lost race). */
  async insertIfAbsent(key: BoundConversationKey, threadId: string): Promise<ConversationRecord> {
    const inserted = await this.db
      .insert(channelConversations)
      .values({ connectionId: key.connectionId, chatId: key.chatId, topicId: key.topicId ?? '', threadId })
      .onConflictDoNothing()
      .returning({ threadId: channelConversations.threadId });
    return inserted[0] === undefined ? ((await this.find(key)) as ConversationRecord) : { threadId, isBootstrapping: false };
  }

  /** Points the conversation at a new thread, set up as `settings` say (`/new`, `/agent`, `/bootstrap`). */
  async replace(key: BoundConversationKey, threadId: string, settings: ConversationSettings = {}): Promise<void> {
    const columns = { threadId, agentName: settings.agentName ?? null, isBootstrapping: settings.isBootstrapping ?? false };
    await this.db
      .insert(channelConversations)
      .values({ connectionId: key.connectionId, chatId: key.chatId, topicId: key.topicId ?? '', ...columns })
      .onConflictDoUpdate({
        target: [channelConversations.connectionId, channelConversations.chatId, channelConversations.topicId],
        set: { ...columns, updatedAt: sql`now()` },
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
