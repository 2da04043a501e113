import { sql } from 'drizzle-orm';
import { bigserial, boolean, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { users } from './accounts.js';
import { bytea } from './checkpoints.js';

/**
 * Chats this server hosts itself (the web chat, `channels/web/`): where other platforms keep
 * their conversations on their own servers, a hosted chat keeps them here, so a page reloaded,
 * another browser or another process of the deployment shows the same conversation. `platform`
 * names the channel that hosts it; `owner_user_id` is the account that may read it (null when the
 * server runs without accounts: then everyone on the server may).
 */
export const hostedConversations = pgTable(
  'hosted_conversations',
  {
    id: uuid('id').primaryKey(),
    platform: text('platform').notNull(),
    ownerUserId: uuid('owner_user_id').references(() => users.id, { onDelete: 'cascade' }),
    /** The person's first words, for the list of conversations. */
    title: text('title').notNull().default(''),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** The last message's time: the list shows the most recent first. */
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('hosted_conversations_owner_idx').on(t.platform, t.ownerUserId, t.updatedAt)],
);

/** What a hosted message shows of a file: the id it is fetched by, and what to call it. */
export interface HostedFileRef {
  id: string;
  name: string;
  mimeType: string;
  size: number;
}

/**
 * The messages of a hosted conversation, in order (`id`). An agent's reply is one row: inserted
 * when it starts (its acknowledgement), replaced by the final text with `is_final` set. Partials
 * in between are not stored; they reach open pages only (`ChannelDeps.topic`).
 */
export const hostedMessages = pgTable(
  'hosted_messages',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationId: uuid('conversation_id')
      .notNull()
      .references(() => hostedConversations.id, { onDelete: 'cascade' }),
    author: text('author', { enum: ['person', 'agent'] }).notNull(),
    text: text('text').notNull(),
    files: jsonb('files').$type<HostedFileRef[]>().notNull().default(sql`'[]'::jsonb`),
    isFinal: boolean('is_final').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('hosted_messages_conversation_idx').on(t.conversationId, t.id)],
);

/**
 * Files of hosted conversations, both ways: what a person uploaded (the agent's worker reads it
 * from here, in whichever process it runs) and what the agent sent. Deleted with the conversation.
 */
export const hostedFiles = pgTable('hosted_files', {
  id: uuid('id').primaryKey(),
  conversationId: uuid('conversation_id')
    .notNull()
    .references(() => hostedConversations.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  mimeType: text('mime_type').notNull(),
  size: integer('size').notNull(),
  bytes: bytea('bytes').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
