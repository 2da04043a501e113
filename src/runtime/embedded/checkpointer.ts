import type { BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  type WritesSortKey,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import { and, eq, or, type SQL, sql } from 'drizzle-orm';
import { bytes, rowsOf } from '../../db/driver-rows.js';
import type { Database } from '../../db/index.js';
import { checkpointBlobs, checkpoints, checkpointWrites } from '../../db/schema/checkpoints.js';
import { AgentError } from '../../errors.js';
import { isAppendBlob, MessageListBlobs } from './message-list-blobs.js';
import { type BlobKey, type HeldList, heldKey, MessageListCache } from './message-list-cache.js';

/** What a read leaves out of its query because this process holds it: `heldKey` → the list. */
type Held = ReadonlyMap<string, { key: BlobKey; list: HeldList }>;

/** Blob type of a channel that was cleared at a version; its row has no value. */
const EMPTY_BLOB = 'empty';

/**
 * One checkpoint with its channel values and pending writes, as the tuple query returns it. The
 * arrays are parallel (one aggregate level, so one row order) and null when there is nothing.
 */
interface TupleRow {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string;
  checkpoint: Uint8Array;
  metadata: Record<string, unknown>;
  blob_channels: string[] | null;
  blob_versions: string[] | null;
  blob_types: string[] | null;
  /** Left out (null, or an empty Buffer on postgres-js) for a value this process holds as objects. */
  blob_values: (Uint8Array | null)[] | null;
  write_task_ids: string[] | null;
  write_task_paths: string[] | null;
  write_idxs: number[] | null;
  write_channels: string[] | null;
  write_types: string[] | null;
  write_values: Uint8Array[] | null;
}

/** A stored write with what it sorts by. */
interface StoredWrite {
  key: WritesSortKey;
  taskId: string;
  channel: string;
  type: string;
  value: Uint8Array;
}

/**
 * LangGraph checkpoint saver on our drizzle database, so one class runs on PGlite (embedded) and
 * on Postgres (scaled out). It passes the official `@langchain/langgraph-checkpoint-validation`
 * suite on both.
 *
 * Storage follows the Postgres reference saver: `checkpoints` holds the serialized checkpoint
 * without its channel values; each channel value is stored once per version in
 * `checkpoint_blobs`, written only when `put` is told the channel changed (`newVersions`); and
 * `checkpoint_writes` holds pending writes. Reading a checkpoint is one query.
 *
 * Channel versions are numbers with a random fraction (see {@link getNextVersion}), so a fork
 * never collides with its sibling's blobs.
 *
 * Long conversations ({@link MessageListBlobs}): the message list this process stored or read
 * last for a thread is kept as live objects, so the next turn neither fetches nor deserializes
 * the history, and a list that extends it is stored as an `append:<base version>` row holding
 * only the new messages (the whole list again every 20 turns), so a turn writes its own messages,
 * not the conversation. A saver that never saw the thread reads the chain of rows instead.
 *
 * @example
 * ```ts
 * const { db } = await openDatabase({ dataDir: './.data' });
 * const graph = builder.compile({ checkpointer: new DrizzleCheckpointSaver(db) });
 * ```
 */
export class DrizzleCheckpointSaver extends BaseCheckpointSaver {
  private readonly db: Database;
  private readonly messageLists: MessageListBlobs;

  /**
   * @param db An open database whose migrations include the checkpoint tables.
   * @param serde Serializer for checkpoints, channel values and writes; LangGraph's
   *   `JsonPlusSerializer` by default.
   */
  constructor(db: Database, serde?: SerializerProtocol) {
    super(serde);
    this.db = db;
    this.messageLists = new MessageListBlobs(db, this.serde);
  }

  /**
   * The checkpoint named by `config.configurable.checkpoint_id`, or the latest one of the thread
   * and namespace (default `''`) when no id is given, with its pending writes in replay order.
   * Resolves to `undefined` when there is no such checkpoint or no `thread_id`.
   */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId: unknown = config.configurable?.thread_id;
    if (threadId === undefined || threadId === null || threadId === '') return undefined;
    const checkpointNs: string = config.configurable?.checkpoint_ns ?? '';
    const checkpointId = getCheckpointId(config);
    const conditions = [sql`thread_id = ${String(threadId)}`, sql`checkpoint_ns = ${checkpointNs}`];
    if (checkpointId) conditions.push(sql`checkpoint_id = ${checkpointId}`);
    const [tuple] = await this.selectTuples(conditions, 1, { threadId: String(threadId), isLatestRead: checkpointId === undefined });
    return tuple;
  }

  /**
   * Checkpoints newest first (by checkpoint id, which is time-ordered). Every filter is optional:
   * `config.configurable` narrows by `thread_id`, `checkpoint_ns` and `checkpoint_id`; `before`
   * keeps ids older than its `checkpoint_id`; `filter` keeps checkpoints whose metadata contains
   * those key/value pairs (jsonb containment). All matches are read in one query, so pass `limit`
   * on long threads.
   */
  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { before, limit, filter } = options;
    const conditions: SQL[] = [];
    const { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpointId } = config.configurable ?? {};
    if (threadId !== undefined && threadId !== null && threadId !== '') conditions.push(sql`thread_id = ${String(threadId)}`);
    // '' is the root namespace, a real filter; only an absent namespace means "any".
    if (checkpointNs !== undefined && checkpointNs !== null) conditions.push(sql`checkpoint_ns = ${String(checkpointNs)}`);
    if (checkpointId) conditions.push(sql`checkpoint_id = ${String(checkpointId)}`);
    if (filter && Object.keys(filter).length > 0) {
      conditions.push(sql`metadata @> ${JSON.stringify(filter)}::jsonb`);
    }
    const beforeId: unknown = before?.configurable?.checkpoint_id;
    if (beforeId) conditions.push(sql`checkpoint_id < ${String(beforeId)}`);
    // `limit` may come from an API caller: only a finite whole number reaches the query.
    const rowLimit = Number.isFinite(Number(limit)) ? Math.max(0, Math.trunc(Number(limit))) : undefined;
    yield* await this.selectTuples(conditions, rowLimit, threadId ? { threadId: String(threadId), isLatestRead: false } : undefined);
  }

  /**
   * Stores a checkpoint under `config.configurable.thread_id` and `checkpoint_ns` (default `''`),
   * as a child of `config.configurable.checkpoint_id` when that is set. Only the channels named
   * in `newVersions` get a new value row; the others are found at the version an ancestor stored.
   *
   * @returns The config that addresses the stored checkpoint.
   * @throws {AgentError} `INTERNAL` when the config has no `thread_id`.
   */
  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = requireThreadId(config, 'put');
    const checkpointNs: string = config.configurable?.checkpoint_ns ?? '';
    const parentCheckpointId: string | undefined = config.configurable?.checkpoint_id || undefined;
    const { channel_values: values, ...rest } = checkpoint;

    const [checkpointType, serialized] = await this.serde.dumpsTyped(rest);
    const { rows: blobRows, messageLists } = await this.dumpBlobs(threadId, checkpointNs, values, newVersions);
    const row = {
      threadId,
      checkpointNs,
      checkpointId: checkpoint.id,
      parentCheckpointId,
      type: checkpointType,
      checkpoint: serialized,
      blobVersions: Object.fromEntries(
        Object.entries(checkpoint.channel_versions).map(([channel, version]) => [channel, versionKey(version)]),
      ),
      metadata: await this.metadataToJson(metadata),
    };
    const upsert = {
      target: [checkpoints.threadId, checkpoints.checkpointNs, checkpoints.checkpointId],
      set: {
        parentCheckpointId: sql`excluded.parent_checkpoint_id`,
        type: sql`excluded.type`,
        checkpoint: sql`excluded.checkpoint`,
        blobVersions: sql`excluded.blob_versions`,
        metadata: sql`excluded.metadata`,
      },
    };

    if (blobRows.length === 0) {
      await this.db.insert(checkpoints).values(row).onConflictDoUpdate(upsert);
    } else {
      // One statement, so the checkpoint never exists without its values. A blob that is already
      // there is the same value: its key is (thread, namespace, channel, version).
      const insertBlobs = this.db
        .$with('inserted_blobs', {})
        .as(this.db.insert(checkpointBlobs).values(blobRows).onConflictDoNothing().getSQL());
      await this.db.with(insertBlobs).insert(checkpoints).values(row).onConflictDoUpdate(upsert);
    }
    for (const { key, messages, appendDepth } of messageLists) this.messageLists.cache.set(key, messages, appendDepth);

    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  /**
   * Stores the writes a task made against a checkpoint. Special channels (error, interrupt,
   * resume, scheduled) have fixed negative slots and replace what the task wrote there before;
   * regular writes are insert-or-ignore, so a retried task keeps its first result.
   *
   * @param taskPath The task's path; with task id and index it fixes the replay order.
   * @throws {AgentError} `INTERNAL` when the config has no `thread_id` or `checkpoint_id`.
   */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    const threadId = requireThreadId(config, 'putWrites');
    const checkpointId: unknown = config.configurable?.checkpoint_id;
    if (typeof checkpointId !== 'string' || checkpointId === '') {
      throw new AgentError('INTERNAL', 'checkpoint putWrites needs config.configurable.checkpoint_id');
    }
    const checkpointNs: string = config.configurable?.checkpoint_ns ?? '';
    // Keyed by slot: two writes to one special channel in a call would otherwise hit the same
    // row twice in one INSERT ... ON CONFLICT DO UPDATE, which Postgres rejects. The last wins.
    const rows = new Map<number, typeof checkpointWrites.$inferInsert>();
    await Promise.all(
      writes.map(async ([channel, value], position) => {
        const idx = WRITES_IDX_MAP[channel] ?? position;
        const [type, serialized] = await this.serde.dumpsTyped(value);
        rows.set(idx, { threadId, checkpointNs, checkpointId, taskId, idx, taskPath, channel, type, value: serialized });
      }),
    );
    if (rows.size === 0) return;
    await this.db
      .insert(checkpointWrites)
      .values([...rows.values()])
      .onConflictDoUpdate({
        target: [
          checkpointWrites.threadId,
          checkpointWrites.checkpointNs,
          checkpointWrites.checkpointId,
          checkpointWrites.taskId,
          checkpointWrites.idx,
        ],
        set: {
          taskPath: sql`excluded.task_path`,
          channel: sql`excluded.channel`,
          type: sql`excluded.type`,
          value: sql`excluded.value`,
        },
        // Only special slots are overwritten (LangGraph's WRITES_IDX_MAP semantics).
        setWhere: sql`${checkpointWrites.idx} < 0`,
      });
  }

  /** Deletes every checkpoint, channel value and write of a thread, in all namespaces, atomically. */
  async deleteThread(threadId: string): Promise<void> {
    this.messageLists.cache.deleteThread(threadId);
    await this.db.execute(sql`
      with deleted_blobs as (delete from checkpoint_blobs where thread_id = ${threadId}),
           deleted_writes as (delete from checkpoint_writes where thread_id = ${threadId})
      delete from checkpoints where thread_id = ${threadId}`);
  }

  /**
   * Next version of a channel: the integer part counts like the base class (1, 2, 3, ...); the
   * random fraction keeps versions unique across branches. Values are stored once per
   * (channel, version), so two forks of one checkpoint that both wrote "version 7" would otherwise
   * read each other's value. (Python's PostgresSaver does the same with string versions; the JS
   * graph API only accepts number versions from a saver.)
   */
  override getNextVersion(current: number | undefined): number {
    // Older or foreign checkpoints may carry integer or "<int>.<suffix>" string versions.
    const step = current === undefined ? 0 : Math.floor(Number.parseFloat(String(current)));
    return (Number.isFinite(step) ? step : 0) + 1 + Math.random();
  }

  /**
   * Value rows for the channels that changed (a channel absent from `values` was cleared), and
   * the message lists among them, for the cache once the rows are stored.
   */
  private async dumpBlobs(
    threadId: string,
    checkpointNs: string,
    values: Checkpoint['channel_values'],
    newVersions: ChannelVersions,
  ): Promise<{ rows: (typeof checkpointBlobs.$inferInsert)[]; messageLists: { key: BlobKey; messages: BaseMessage[]; appendDepth: number }[] }> {
    const messageLists: { key: BlobKey; messages: BaseMessage[]; appendDepth: number }[] = [];
    const rows = await Promise.all(
      Object.entries(newVersions).map(async ([channel, version]) => {
        const key = { threadId, checkpointNs, channel, version: versionKey(version) };
        if (!(channel in values)) return { ...key, type: EMPTY_BLOB, blob: null };
        const value = values[channel];
        if (MessageListCache.isMessageList(value)) {
          const list = await this.messageLists.dump(key, value);
          if (list !== undefined) {
            messageLists.push({ key, messages: value, appendDepth: list.appendDepth });
            return { ...key, type: list.type, blob: list.blob };
          }
        }
        const [type, blob] = await this.serde.dumpsTyped(value);
        return { ...key, type, blob };
      }),
    );
    return { rows, messageLists };
  }

  /**
   * Runs the tuple query for checkpoints matching all `conditions`, newest first. With the
   * thread they all belong to, the query leaves out the values this process holds as objects;
   * `isLatestRead` (a run starting on the thread's latest checkpoint) makes the lists read the
   * ones held for the next turn.
   */
  private async selectTuples(conditions: SQL[], limit?: number, thread?: { threadId: string; isLatestRead: boolean }): Promise<CheckpointTuple[]> {
    const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
    const limitClause = limit === undefined ? sql`` : sql`limit ${limit}`;
    const held: Held = thread === undefined ? new Map() : this.messageLists.cache.heldFor(thread.threadId);
    const heldKeys = [...held.values()].map(({ key }) => sql`(${key.checkpointNs}, ${key.channel}, ${key.version})`);
    const blobValue =
      heldKeys.length === 0
        ? sql`bl.blob`
        : sql`case when (bl.checkpoint_ns, bl.channel, bl.version) in (${sql.join(heldKeys, sql`, `)}) then null else bl.blob end`;
    // The inner select picks the checkpoints first (the primary key serves thread + namespace,
    // newest first), so the lateral joins run only for rows that are returned.
    const result = await this.db.execute(sql`
      select cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id, cp.parent_checkpoint_id, cp.type,
             cp.checkpoint, cp.metadata,
             b.channels as blob_channels, b.versions as blob_versions, b.types as blob_types, b.blobs as blob_values,
             w.task_ids as write_task_ids, w.task_paths as write_task_paths, w.idxs as write_idxs,
             w.channels as write_channels, w.types as write_types, w.blobs as write_values
      from (select * from checkpoints ${where} order by checkpoint_id desc ${limitClause}) cp
      left join lateral (
        select array_agg(bl.channel) as channels, array_agg(bl.version) as versions, array_agg(bl.type) as types,
               array_agg(${blobValue}) as blobs
        from jsonb_each_text(cp.blob_versions) as v
        join checkpoint_blobs bl
          on bl.thread_id = cp.thread_id and bl.checkpoint_ns = cp.checkpoint_ns
         and bl.channel = v.key and bl.version = v.value
        -- A cleared channel has no value; leaving it out also keeps nulls out of the array.
        where bl.type <> ${EMPTY_BLOB}
      ) b on true
      left join lateral (
        select array_agg(cw.task_id) as task_ids, array_agg(cw.task_path) as task_paths,
               array_agg(cw.idx) as idxs, array_agg(cw.channel) as channels,
               array_agg(cw.type) as types, array_agg(cw.value) as blobs
        from checkpoint_writes cw
        where cw.thread_id = cp.thread_id and cw.checkpoint_ns = cp.checkpoint_ns
          and cw.checkpoint_id = cp.checkpoint_id
      ) w on true
      order by cp.checkpoint_id desc`);
    const rows = rowsOf<TupleRow>(result);
    const tuples = await Promise.all(rows.map((row) => this.toTuple(row, held, thread?.isLatestRead === true)));
    await this.migratePendingSends(rows, tuples);
    return tuples;
  }

  private async toTuple(row: TupleRow, held: Held, isLatestRead: boolean): Promise<CheckpointTuple> {
    const { thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id } = row;
    const stored = (await this.serde.loadsTyped(row.type, bytes(row.checkpoint))) as Omit<Checkpoint, 'channel_values'>;
    const channels = row.blob_channels ?? [];
    const channelValues = Object.fromEntries(
      await Promise.all(
        channels.map(async (channel, i) => {
          const key: BlobKey = { threadId: thread_id, checkpointNs: checkpoint_ns, channel, version: row.blob_versions?.[i] ?? '' };
          const kept = held.get(heldKey(key));
          // Held means the query left the value out (postgres-js reads that null as an empty Buffer).
          if (kept !== undefined) return [channel, [...kept.list.messages]];
          const type = row.blob_types?.[i] ?? '';
          const blob = bytes(row.blob_values?.[i] ?? undefined);
          const list = isAppendBlob(type) ? await this.messageLists.loadAppended(key, type, blob, held) : await this.loadWhole(type, blob);
          if (!('messages' in list)) return [channel, list.value];
          const { cache } = this.messageLists;
          if (isLatestRead) cache.set(key, list.messages, list.appendDepth);
          else cache.offer(key, list.messages, list.appendDepth);
          return [channel, [...list.messages]];
        }),
      ),
    );
    const writes: StoredWrite[] = (row.write_task_ids ?? []).map((taskId, i) => ({
      key: writesSortKey(row.write_task_paths?.[i] ?? '', taskId, row.write_idxs?.[i] ?? 0),
      taskId,
      channel: row.write_channels?.[i] ?? '',
      type: row.write_types?.[i] ?? '',
      value: bytes(row.write_values?.[i]),
    }));
    const tuple: CheckpointTuple = {
      config: { configurable: { thread_id, checkpoint_ns, checkpoint_id } },
      checkpoint: { ...stored, channel_values: channelValues },
      metadata: (await this.serde.loadsTyped('json', JSON.stringify(row.metadata))) as CheckpointMetadata,
      pendingWrites: await this.loadWrites(writes),
    };
    if (parent_checkpoint_id !== null) {
      tuple.parentConfig = { configurable: { thread_id, checkpoint_ns, checkpoint_id: parent_checkpoint_id } };
    }
    return tuple;
  }

  /** A value stored whole; a message list comes back as one, to be held. */
  private async loadWhole(type: string, blob: Uint8Array): Promise<{ value: unknown } | Omit<HeldList, 'version'>> {
    const value = await this.serde.loadsTyped(type, blob);
    return MessageListCache.isMessageList(value) ? { messages: value, appendDepth: 0 } : { value };
  }

  /** Deserializes writes in LangGraph's replay order, `(task_path, task_id, idx)`. */
  private loadWrites(writes: StoredWrite[]): Promise<CheckpointPendingWrite[]> {
    // The official comparator, not SQL ORDER BY: it compares by code point whatever the
    // database collation is, exactly as live execution orders a superstep's writes.
    const ordered = [...writes].sort((a, b) => compareWritesSortKeys(a.key, b.key));
    return Promise.all(
      ordered.map(
        async (w): Promise<CheckpointPendingWrite> => [w.taskId, w.channel, await this.serde.loadsTyped(w.type, w.value)],
      ),
    );
  }

  /**
   * Checkpoints before format v4 kept pending sends in the parent's writes to the TASKS channel
   * instead of in `channel_values`; move them where current LangGraph reads them. Costs one more
   * query, only when such a checkpoint is read.
   */
  private async migratePendingSends(rows: TupleRow[], tuples: CheckpointTuple[]): Promise<void> {
    const legacy = tuples.flatMap((tuple, i) => {
      const parentId = rows[i]?.parent_checkpoint_id;
      return tuple.checkpoint.v < 4 && parentId ? [{ tuple, parentId }] : [];
    });
    if (legacy.length === 0) return;
    const parentOf = (tuple: CheckpointTuple, parentId: string) =>
      and(
        eq(checkpointWrites.threadId, tuple.config.configurable?.thread_id),
        eq(checkpointWrites.checkpointNs, tuple.config.configurable?.checkpoint_ns),
        eq(checkpointWrites.checkpointId, parentId),
      );
    const sends = await this.db
      .select()
      .from(checkpointWrites)
      .where(and(eq(checkpointWrites.channel, TASKS), or(...legacy.map(({ tuple, parentId }) => parentOf(tuple, parentId)))));

    for (const { tuple, parentId } of legacy) {
      const { thread_id, checkpoint_ns } = tuple.config.configurable ?? {};
      const mine = sends.filter(
        (s) => s.threadId === thread_id && s.checkpointNs === checkpoint_ns && s.checkpointId === parentId,
      );
      if (mine.length === 0) continue;
      const loaded = await this.loadWrites(
        mine.map((s) => ({ ...s, key: writesSortKey(s.taskPath, s.taskId, s.idx), value: bytes(s.value) })),
      );
      const { checkpoint } = tuple;
      checkpoint.channel_values[TASKS] = loaded.map(([, , value]) => value);
      const versions = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions[TASKS] =
        versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
    }
  }

  /**
   * Metadata goes to a jsonb column so `list` can filter on it in SQL. It is serialized with the
   * serde first (so LangChain objects survive the round trip) and stripped of NUL characters,
   * which jsonb cannot hold.
   */
  private async metadataToJson(metadata: CheckpointMetadata): Promise<Record<string, unknown>> {
    const [type, serialized] = await this.serde.dumpsTyped(metadata);
    if (type !== 'json') {
      throw new AgentError('INTERNAL', `checkpoint metadata must serialize to json, got ${type}`);
    }
    return JSON.parse(new TextDecoder().decode(serialized), (_key, value: unknown) => {
      if (typeof value === 'string') return value.replaceAll('\0', '');
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replaceAll('\0', ''), v]));
      }
      return value;
    }) as Record<string, unknown>;
  }
}

function requireThreadId(config: RunnableConfig, operation: string): string {
  const threadId: unknown = config.configurable?.thread_id;
  if (threadId === undefined || threadId === null || threadId === '') {
    throw new AgentError('INTERNAL', `checkpoint ${operation} needs config.configurable.thread_id`);
  }
  return String(threadId);
}

/** The text a channel version is stored under; `put` and the tuple query's join both use it. */
function versionKey(version: number | string): string {
  return String(version);
}
