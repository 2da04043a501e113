import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * Scheduled work (issue #17): a task the agent runs on a clock and answers into the chat it was
 * made in. `next_run_at` is also the claim: a process that fires an occurrence moves it to the
 * following one with a compare-and-set, so each occurrence fires once however many processes
 * look; the occurrence itself enters the turn journal under its own id before that, so a crash
 * between the two cannot fire it twice either.
 */
export const schedules = pgTable(
  'schedules',
  {
    /** Short, typed by people: `/schedule cancel k3x9qa`. */
    id: text('id').primaryKey(),
    /** The storage user the runs are for (a bound account, else the sender's safe platform id); only they (or the operator) see and change it. */
    ownerUserId: text('owner_user_id').notNull(),
    channel: text('channel').notNull(),
    chatId: text('chat_id').notNull(),
    /** '' for the chat itself, like `thread_mappings.topic_id`. */
    topicId: text('topic_id').notNull().default(''),
    /**
     * The `InboundMessage` each occurrence starts from: who asked, where to answer, their trust as
     * it was when they asked. Text, ids and times are filled in per occurrence.
     */
    origin: jsonb('origin').$type<Record<string, unknown>>().notNull(),
    /** The schedule's own agent thread: its runs never mix with the chat's conversation. */
    threadId: uuid('thread_id').notNull(),
    task: text('task').notNull(),
    /** The `ScheduleSpec` (cron, every, once) with its time zone. */
    spec: jsonb('spec').$type<Record<string, unknown>>().notNull(),
    /** What a start finds for occurrences missed while no process ran: `run_once` (one run now) or `skip`. */
    missed: text('missed').notNull().default('run_once'),
    /** `active`, `paused`, `done` (a one-off that ran) or `cancelled`. */
    state: text('state').notNull().default('active'),
    /** Null once nothing is due any more (done, cancelled). */
    nextRunAt: timestamp('next_run_at', { withTimezone: true }),
    lastRunAt: timestamp('last_run_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('schedules_due_idx').on(t.nextRunAt).where(sql`${t.state} = 'active'`),
    index('schedules_owner_idx').on(t.ownerUserId, t.createdAt),
  ],
);

/** What a person chose for their schedules: the time zone their wall-clock words are read in. */
export const schedulePreferences = pgTable('schedule_preferences', {
  ownerUserId: text('owner_user_id').primaryKey(),
  /** An IANA name (`Europe/Berlin`). */
  timezone: text('timezone').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
