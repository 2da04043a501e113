import { sql } from 'drizzle-orm';
import { bigserial, boolean, index, jsonb, pgTable, primaryKey, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * Conversation → agent thread (reference §3.1). `topic_id` is '' for "one thread per chat",
 * so the key is a plain composite primary key on both drivers.
 */
export const threadMappings = pgTable(
  'thread_mappings',
  {
    channel: text('channel').notNull(),
    chatId: text('chat_id').notNull(),
    topicId: text('topic_id').notNull().default(''),
    /** The runtime's thread id; no foreign key, since a remote runtime keeps its threads elsewhere. */
    threadId: uuid('thread_id').notNull(),
    /** The platform user who started the conversation. */
    userId: text('user_id'),
    /** The custom agent chosen with `/agent` for this conversation; null: the channel's default. */
    agentName: text('agent_name'),
    /** Set by `/bootstrap`: the conversation's runs may create or update a custom agent, until `/new` or `/agent`. */
    isBootstrapping: boolean('is_bootstrapping').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.channel, t.chatId, t.topicId] })],
);

/**
 * The turn journal: every inbound message a worker accepted, so a platform redelivery runs once
 * (reference §4.2), and, until its reply is on screen, the message itself with its reply target,
 * so a turn a crash interrupted is taken up again at the next start (issue #15). `message` is null
 * for rows written before the journal kept it; `finished_at` is set once the turn ended, answered
 * or told; `resumes` counts how often it was taken up again.
 */
export const inboundDedupe = pgTable(
  'inbound_dedupe',
  {
    channel: text('channel').notNull(),
    workspaceId: text('workspace_id').notNull(),
    chatId: text('chat_id').notNull(),
    messageId: text('message_id').notNull(),
    firstSeen: timestamp('first_seen', { withTimezone: true }).notNull().defaultNow(),
    message: jsonb('message'),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    resumes: smallint('resumes').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.channel, t.workspaceId, t.chatId, t.messageId] }),
    index('inbound_dedupe_first_seen_idx').on(t.firstSeen),
    index('inbound_dedupe_unfinished_idx').on(t.firstSeen).where(sql`${t.finishedAt} is null and ${t.message} is not null`),
  ],
);

/**
 * Messages that arrived while their thread was busy with a fire-and-forget run (reference §4.10),
 * delivered together once it is free. In the database, so they survive a restart and any process
 * can deliver them. `id` orders them; a taken batch that cannot run goes back with its ids.
 */
export const followUps = pgTable(
  'follow_ups',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    threadId: uuid('thread_id').notNull(),
    /** The message's dedupe key; a second copy of one message is not buffered twice. */
    messageKey: text('message_key').notNull(),
    /** The whole `InboundMessage`, so the batch runs as its sender and agent. */
    message: jsonb('message').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('follow_ups_thread_key_idx').on(t.threadId, t.messageKey), index('follow_ups_thread_idx').on(t.threadId, t.id)],
);

/**
 * Small pieces of state an adapter keeps across restarts and processes (Discord: which thread it
 * opened for a channel message), per platform and key.
 */
export const channelState = pgTable(
  'channel_state',
  {
    platform: text('platform').notNull(),
    key: text('key').notNull(),
    value: jsonb('value').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.platform, t.key] })],
);

/**
 * Replies that could not be delivered at once (issue #15): a final, an error notice or files,
 * kept with everything needed to send them again from any process, after a restart too.
 * `next_attempt_at` is also the claim: a process taking an entry moves it past its own attempt,
 * so another process (or the next start, after a crash) takes it up only once that passed.
 * `dead_at` is set when `deadline` passed or the platform refused for good: a dead letter, kept
 * for the operator to see and retry.
 */
export const outbox = pgTable(
  'outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    channel: text('channel').notNull(),
    /** The `ReplyTarget`, continuing the reply in place (the placeholder or stream message it showed). */
    target: jsonb('target').$type<Record<string, unknown>>().notNull(),
    /** '' when only files are left to send. */
    text: text('text').notNull(),
    outcome: jsonb('outcome').$type<Record<string, unknown>>(),
    files: jsonb('files').$type<Record<string, unknown>[]>().notNull().default([]),
    attempts: smallint('attempts').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull(),
    deadline: timestamp('deadline', { withTimezone: true }).notNull(),
    /** Why the last attempt failed; secret-free, never the reply's text. */
    lastError: text('last_error'),
    deadAt: timestamp('dead_at', { withTimezone: true }),
  },
  (t) => [index('outbox_due_idx').on(t.nextAttemptAt).where(sql`${t.deadAt} is null`)],
);
