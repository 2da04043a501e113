import { index, jsonb, pgTable, real, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** The kinds of fact the memory updater may record (reference backend guide, "Memory System"). */
export const MEMORY_FACT_CATEGORIES = ['preference', 'knowledge', 'context', 'behavior', 'goal'] as const;
export type MemoryFactCategory = (typeof MEMORY_FACT_CATEGORIES)[number];

/** One thing worth remembering about a user, learned from a conversation. */
export const memoryFacts = pgTable(
  'memory_facts',
  {
    id: uuid('id').primaryKey(),
    /** The storage user id (the manager's safe user id, or the bound owner). */
    userId: text('user_id').notNull(),
    /** Trimmed; unique per user, which is the fact dedupe even across processes. */
    content: text('content').notNull(),
    category: text('category').$type<MemoryFactCategory>().notNull(),
    /** 0..1, as the model judged it; facts under the configured threshold are never stored. */
    confidence: real('confidence').notNull(),
    /** Where it was learned, e.g. the thread id; never message text. */
    source: text('source'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('memory_facts_user_content_idx').on(t.userId, t.content), index('memory_facts_user_idx').on(t.userId)],
);

/** Short summaries the updater keeps about a user, each one to three sentences; '' when unknown. */
export interface MemorySummaries {
  workContext: string;
  personalContext: string;
  topOfMind: string;
}

export const memoryProfiles = pgTable('memory_profiles', {
  userId: text('user_id').primaryKey(),
  summaries: jsonb('summaries').$type<MemorySummaries>().notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
