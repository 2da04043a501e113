import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../index.js';
import { threadMappings } from '../schema/index.js';

/** A conversation: one chat, or one topic inside a chat (reference §3.3). */
export interface ConversationKey {
  channel: string;
  chatId: string;
  topicId?: string | undefined;
}

/** What a conversation is mapped to: its thread, and what `/agent` and `/bootstrap` chose for it. */
export interface ConversationRecord {
  threadId: string;
  /** The custom agent chosen for the conversation; undefined: the channel's default. */
  agentName?: string;
  /** The conversation is setting up a custom agent (`/bootstrap`). */
  isBootstrapping: boolean;
}

/** How a conversation's next thread is set up (`/new`, `/agent`, `/bootstrap`). */
export interface ConversationSettings {
  agentName?: string | undefined;
  isBootstrapping?: boolean;
}

export function toConversationRecord(row: { threadId: string; agentName: string | null; isBootstrapping: boolean }): ConversationRecord {
  return { threadId: row.threadId, ...(row.agentName === null ? {} : { agentName: row.agentName }), isBootstrapping: row.isBootstrapping };
}

/** Conversation → agent thread id. */
export class ThreadMapRepo {
  constructor(private readonly db: Database) {}

  async find(key: ConversationKey): Promise<ConversationRecord | undefined> {
    const [row] = await this.db
      .select({ threadId: threadMappings.threadId, agentName: threadMappings.agentName, isBootstrapping: threadMappings.isBootstrapping })
      .from(threadMappings)
      .where(this.where(key));
    return row === undefined ? undefined : toConversationRecord(row);
  }

  /** Records the mapping unless one exists; returns the mapping that won. */
  async insertIfAbsent(key: ConversationKey, threadId: string, userId: string): Promise<ConversationRecord> {
    const inserted = await this.db
      .insert(threadMappings)
      .values({ channel: key.channel, chatId: key.chatId, topicId: key.topicId ?? '', threadId, userId })
      .onConflictDoNothing()
      .returning({ threadId: threadMappings.threadId });
    return inserted[0] === undefined ? ((await this.find(key)) as ConversationRecord) : { threadId, isBootstrapping: false };
  }

  /** Points the conversation at a new thread, set up as `settings` say (`/new`, `/agent`, `/bootstrap`). */
  async replace(key: ConversationKey, threadId: string, userId: string, settings: ConversationSettings = {}): Promise<void> {
    const columns = { threadId, userId, agentName: settings.agentName ?? null, isBootstrapping: settings.isBootstrapping ?? false };
    await this.db
      .insert(threadMappings)
      .values({ channel: key.channel, chatId: key.chatId, topicId: key.topicId ?? '', ...columns })
      .onConflictDoUpdate({
        target: [threadMappings.channel, threadMappings.chatId, threadMappings.topicId],
        set: { ...columns, updatedAt: sql`now()` },
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
