import { customType, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/** Serialized LangGraph values, as the saver's serde produced them. */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBufferLike)),
});

/**
 * LangGraph checkpoints; thread ids are free-form strings here, as the saver contract allows.
 * `checkpoint` holds everything but `channel_values`, which live in `checkpoint_blobs`.
 */
export const checkpoints = pgTable(
  'checkpoints',
  {
    threadId: text('thread_id').notNull(),
    checkpointNs: text('checkpoint_ns').notNull().default(''),
    checkpointId: text('checkpoint_id').notNull(),
    parentCheckpointId: text('parent_checkpoint_id'),
    type: text('type').notNull(),
    checkpoint: bytea('checkpoint').notNull(),
    /**
     * Channel → version key of its `checkpoint_blobs` row, copied out of the serialized checkpoint
     * so one query can join a checkpoint to its channel values.
     */
    blobVersions: jsonb('blob_versions').$type<Record<string, string>>().notNull().default({}),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
  },
  // The primary key also serves "latest checkpoint of a thread" and `before` (a backward range scan).
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.checkpointId] })],
);

/**
 * One value per channel version. A checkpoint stores only the channels that changed since its
 * parent, so a long conversation keeps one copy of each message list version, not one per step.
 */
export const checkpointBlobs = pgTable(
  'checkpoint_blobs',
  {
    threadId: text('thread_id').notNull(),
    checkpointNs: text('checkpoint_ns').notNull().default(''),
    channel: text('channel').notNull(),
    version: text('version').notNull(),
    /**
     * Serde type; `empty` when the channel was cleared at this version (then `blob` is null);
     * `append:<version>` for a message list stored as the list at that version of the same
     * channel plus the messages in `blob` (see `src/runtime/embedded/message-list-blobs.ts`).
     */
    type: text('type').notNull(),
    blob: bytea('blob'),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.channel, t.version] })],
);

export const checkpointWrites = pgTable(
  'checkpoint_writes',
  {
    threadId: text('thread_id').notNull(),
    checkpointNs: text('checkpoint_ns').notNull().default(''),
    checkpointId: text('checkpoint_id').notNull(),
    taskId: text('task_id').notNull(),
    /** Position in the task's write list; special channels (errors, interrupts) use fixed negative slots. */
    idx: integer('idx').notNull(),
    /** Path of the task that wrote it; with task id and idx, the order writes are replayed in. */
    taskPath: text('task_path').notNull().default(''),
    channel: text('channel').notNull(),
    type: text('type').notNull(),
    value: bytea('value').notNull(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.checkpointId, t.taskId, t.idx] })],
);
