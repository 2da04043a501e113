import { sql } from 'drizzle-orm';
import { bigserial, boolean, index, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/** A person with a server account. Their id is their storage user id (memory, files, sandbox). */
export const users = pgTable('users', {
  id: uuid('id').primaryKey(),
  /** Unique, as the operator typed it; shown in the console. */
  name: text('name').notNull().unique(),
  /** SHA-256 (hex) of the API key; the key itself is shown once and never stored. */
  apiKeyHash: text('api_key_hash').notNull().unique(),
  /**
   * The operator's grant of `bash` in accounts mode (`user grant-shell`, `PATCH /api/users/:id`).
   * Off by default: without isolation between accounts, a shell reaches other users' files.
   */
  canUseShell: boolean('can_use_shell').notNull().default(false),
  /**
   * Set by the operator (`user disable`, `PATCH /api/users/:id {disabled}`): the key answers 403
   * and bound chats are told so; null = active. Cleared by enabling.
   */
  disabledAt: timestamp('disabled_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

export const CONNECTION_STATUSES = ['connected', 'revoked'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/**
 * A chat identity bound to a user (reference §8.2). `workspace_id` is '' when the platform has
 * none. At most one non-revoked owner per identity: the latest bind takes it over.
 */
export const channelConnections = pgTable(
  'channel_connections',
  {
    id: uuid('id').primaryKey(),
    ownerUserId: uuid('owner_user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    status: text('status').$type<ConnectionStatus>().notNull().default('connected'),
    externalAccountId: text('external_account_id').notNull(),
    externalAccountName: text('external_account_name'),
    workspaceId: text('workspace_id').notNull().default(''),
    workspaceName: text('workspace_name'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('uq_channel_connection_owner_provider_identity').on(t.ownerUserId, t.provider, t.externalAccountId, t.workspaceId),
    uniqueIndex('uq_channel_connection_active_identity')
      .on(t.provider, t.externalAccountId, t.workspaceId)
      .where(sql`${t.status} <> 'revoked'`),
    index('channel_connections_owner_idx').on(t.ownerUserId),
  ],
);

/** One-time connect codes (reference §8.1): only the SHA-256 of the code is stored. */
export const channelConnectCodes = pgTable(
  'channel_connect_codes',
  {
    codeHash: text('code_hash').primaryKey(),
    ownerUserId: uuid('owner_user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    provider: text('provider').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('channel_connect_codes_owner_provider_idx').on(t.ownerUserId, t.provider)],
);

/**
 * The thread of a bound person's conversation (reference §8.2 `channel_conversations`): two
 * bound people in one group chat get separate threads. `topic_id` is '' for none.
 */
export const channelConversations = pgTable(
  'channel_conversations',
  {
    connectionId: uuid('connection_id')
      .notNull()
      .references(() => channelConnections.id, { onDelete: 'cascade' }),
    chatId: text('chat_id').notNull(),
    topicId: text('topic_id').notNull().default(''),
    threadId: uuid('thread_id').notNull(),
    /** The custom agent chosen with `/agent` for this conversation; null: the channel's default. */
    agentName: text('agent_name'),
    /** Set by `/bootstrap`: the conversation's runs may create or update a custom agent, until `/new` or `/agent`. */
    isBootstrapping: boolean('is_bootstrapping').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.connectionId, t.chatId, t.topicId] })],
);

/**
 * `user_deleted`: the operator deleted the account (`provider` and `external_account_id` are '';
 * each of its bindings is recorded as `unbound` just before). `code_rejected`: a code was read and matched nothing; `code_refused_account_limit` and
 * `code_refused_provider_limit`: refused unread, the sender (or every sender on the platform)
 * being over its per-minute limit of rejected codes.
 */
export const CONNECTION_EVENTS = [
  'bound',
  'taken_over',
  'unbound',
  'code_rejected',
  'code_refused_account_limit',
  'code_refused_provider_limit',
  'user_deleted',
] as const;
export type ConnectionEventKind = (typeof CONNECTION_EVENTS)[number];

/**
 * Who bound or unbound which identity, and when; also every refused code attempt, which the
 * per-sender and per-provider limits count and the operator reads (`GET /api/audit/connections`).
 * Never holds a code.
 */
export const channelConnectionEvents = pgTable(
  'channel_connection_events',
  {
    id: uuid('id').primaryKey(),
    kind: text('kind').$type<ConnectionEventKind>().notNull(),
    provider: text('provider').notNull(),
    externalAccountId: text('external_account_id').notNull(),
    workspaceId: text('workspace_id').notNull().default(''),
    /** The user the identity was bound to or taken from; null for rejected codes. */
    userId: uuid('user_id'),
    connectionId: uuid('connection_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Insertion order: breaks ties between events of one transaction (PGlite's clock may not tick between them). */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
  },
  (t) => [
    index('channel_connection_events_sender_idx').on(t.provider, t.externalAccountId, t.kind, t.createdAt),
    // The per-provider limit counts one platform's rejected codes across every sender.
    index('channel_connection_events_provider_idx').on(t.provider, t.kind, t.createdAt),
  ],
);
