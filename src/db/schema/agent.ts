import { sql } from 'drizzle-orm';
import { index, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** LangGraph's run statuses, as the langgraph-sdk reads them. */
export const runStatus = pgEnum('run_status', ['pending', 'running', 'success', 'error', 'timeout', 'interrupted']);

export const threads = pgTable('threads', {
  id: uuid('id').primaryKey(),
  metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export const runs = pgTable(
  'runs',
  {
    id: uuid('id').primaryKey(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    assistantId: text('assistant_id').notNull(),
    status: runStatus('status').notNull().default('pending'),
    multitaskStrategy: text('multitask_strategy').notNull().default('reject'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    kwargs: jsonb('kwargs').$type<Record<string, unknown>>().notNull().default({}),
    /** Secret-free failure description; never the user's text. */
    error: text('error'),
    usage: jsonb('usage').$type<TokenUsage>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    /**
     * The process running an active run renews this; an active run whose lease ran out belongs
     * to a process that died, and no longer blocks its thread.
     */
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Multitask strategy `reject`: at most one active run per thread, across every process.
    uniqueIndex('runs_one_active_per_thread')
      .on(t.threadId)
      .where(sql`${t.status} in ('pending', 'running')`),
    index('runs_thread_created_idx').on(t.threadId, t.createdAt),
  ],
);

