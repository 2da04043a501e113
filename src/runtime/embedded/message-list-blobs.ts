import type { BaseMessage } from '@langchain/core/messages';
import { JsonPlusSerializer, type SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { sql } from 'drizzle-orm';
import { bytes, rowsOf } from '../../db/driver-rows.js';
import type { Database } from '../../db/index.js';
import { AgentError } from '../../errors.js';
import { type BlobKey, type HeldList, heldKey, MessageListCache } from './message-list-cache.js';
import { MessageListSerializer } from './message-list-serializer.js';

/**
 * Blob type of a message list stored as the list at another version plus the messages after it:
 * `append:<base version>`, the blob holding only the appended messages. A conversation's list
 * grows by a turn's messages, so a turn stores those, not the whole history again.
 */
const APPEND_PREFIX = 'append:';
/** Appended rows in a row before the whole list is stored again: bounds a cold read to this many rows. */
const MAX_APPEND_DEPTH = 20;

/** True for the blob type of an appended message list. */
export function isAppendBlob(type: string): boolean {
  return type.startsWith(APPEND_PREFIX);
}

/**
 * How the checkpointer stores and reads message-list channel values. A list that extends the one
 * this process holds for the channel (same message objects first) is stored as an append row;
 * others whole, serialized as the serde would. Reading an append row takes its base from the
 * cache, or from the chain of rows down to a whole one (one recursive query), so a thread
 * written by another process or before a restart reads the same.
 *
 * Only with the default serde: appending relies on its JSON form of a list being its items'.
 */
export class MessageListBlobs {
  readonly cache = new MessageListCache();
  private readonly serializer: MessageListSerializer | undefined;

  constructor(
    private readonly db: Database,
    private readonly serde: SerializerProtocol,
  ) {
    this.serializer = serde instanceof JsonPlusSerializer ? new MessageListSerializer(serde) : undefined;
  }

  /** The row's type and blob for `messages` at `key`, or `undefined` to store it with the serde as any value. */
  async dump(key: BlobKey, messages: readonly BaseMessage[]): Promise<{ type: string; blob: Uint8Array; appendDepth: number } | undefined> {
    if (this.serializer === undefined) return undefined;
    const base = this.cache.latest(key);
    if (base !== undefined && base.version !== key.version && base.appendDepth < MAX_APPEND_DEPTH && extendsList(messages, base.messages)) {
      const appended = await this.serializer.dumps(messages.slice(base.messages.length));
      if (appended !== undefined) return { type: `${APPEND_PREFIX}${base.version}`, blob: appended[1], appendDepth: base.appendDepth + 1 };
    }
    const whole = await this.serializer.dumps(messages);
    return whole && { type: whole[0], blob: whole[1], appendDepth: 0 };
  }

  /**
   * The whole list of an append row at `key`. Its base comes from `held` (what the read left
   * out), the cache, or the database.
   * @throws AgentError `INTERNAL` when the chain has no row holding a whole list (a damaged store).
   */
  async loadAppended(key: BlobKey, type: string, blob: Uint8Array, held: ReadonlyMap<string, { list: HeldList }>): Promise<HeldList> {
    const baseKey = { ...key, version: type.slice(APPEND_PREFIX.length) };
    const appended = (await this.serde.loadsTyped('json', blob)) as BaseMessage[];
    const base = held.get(heldKey(baseKey))?.list ?? this.cache.get(baseKey) ?? (await this.loadChain(baseKey));
    return { version: key.version, messages: [...base.messages, ...appended], appendDepth: base.appendDepth + 1 };
  }

  /** The list at `key` from its rows: it, its base, the base's base, ... down to a whole list. */
  private async loadChain(key: BlobKey): Promise<HeldList> {
    const { threadId, checkpointNs, channel, version } = key;
    const result = await this.db.execute(sql`
      with recursive chain(type, blob, base, depth) as (
        select type, blob, case when type like ${`${APPEND_PREFIX}%`} then substr(type, ${APPEND_PREFIX.length + 1}) end, 0
        from checkpoint_blobs
        where thread_id = ${threadId} and checkpoint_ns = ${checkpointNs} and channel = ${channel} and version = ${version}
        union all
        select b.type, b.blob, case when b.type like ${`${APPEND_PREFIX}%`} then substr(b.type, ${APPEND_PREFIX.length + 1}) end, c.depth + 1
        from chain c
        join checkpoint_blobs b
          on b.thread_id = ${threadId} and b.checkpoint_ns = ${checkpointNs} and b.channel = ${channel} and b.version = c.base
        where c.depth < ${MAX_APPEND_DEPTH * 4}
      )
      select type, blob from chain order by depth desc`);
    const rows = rowsOf<{ type: string; blob: Uint8Array }>(result);
    const [whole, ...appends] = rows;
    if (whole === undefined || isAppendBlob(whole.type)) {
      throw new AgentError('INTERNAL', `checkpoint message list ${channel}@${version} has no stored base`);
    }
    let messages = (await this.serde.loadsTyped(whole.type, bytes(whole.blob))) as BaseMessage[];
    for (const row of appends) messages = [...messages, ...((await this.serde.loadsTyped('json', bytes(row.blob))) as BaseMessage[])];
    return { version, messages, appendDepth: appends.length };
  }
}

/** True when `list` is `base` (the same objects) followed by at least one more message. */
function extendsList(list: readonly BaseMessage[], base: readonly BaseMessage[]): boolean {
  if (list.length <= base.length) return false;
  for (let i = 0; i < base.length; i++) if (list[i] !== base[i]) return false;
  return true;
}
