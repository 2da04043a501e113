import { customType, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/** Serialized LangGraph values, as the saver's serde produced them. */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (value instanceof Uint8Array ? value : new Uint8Array(value as ArrayBufferLike)),
});

/** LangGraph checkpoints; thread ids are free-form strings here, as the saver contract allows. */
export const checkpoints = pgTable(
  'checkpoints',
  {
    threadId: text('thread_id').notNull(),
    checkpointNs: text('checkpoint_ns').notNull().default(''),
    checkpointId: text('checkpoint_id').notNull(),
    parentCheckpointId: text('parent_checkpoint_id'),
    type: text('type').notNull(),
    checkpoint: bytea('checkpoint').notNull(),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.checkpointId] })],
);

export const checkpointWrites = pgTable(
  'checkpoint_writes',
  {
    threadId: text('thread_id').notNull(),
    checkpointNs: text('checkpoint_ns').notNull().default(''),
    checkpointId: text('checkpoint_id').notNull(),
    taskId: text('task_id').notNull(),
    idx: integer('idx').notNull(),
    channel: text('channel').notNull(),
    type: text('type').notNull(),
    value: bytea('value').notNull(),
  },
  (t) => [primaryKey({ columns: [t.threadId, t.checkpointNs, t.checkpointId, t.taskId, t.idx] })],
);
