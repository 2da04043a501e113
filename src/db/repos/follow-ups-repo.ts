import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../index.js';
import { followUps } from '../schema/index.js';

/** A buffered message as stored: its order, its dedupe key and the message itself. */
export interface BufferedFollowUp {
  id: number;
  messageKey: string;
  message: Record<string, unknown>;
}

/**
 * The follow-up buffer of reference §4.10, per thread, in the database: every process sees the
 * same buffer, and it survives a restart. Ordered by `id` (arrival); capped per thread with the
 * oldest dropped; taken in batches that two processes can never both take.
 */
export class FollowUpsRepo {
  constructor(private readonly db: Database) {}

  /**
   * Appends a message unless one with the same key is already buffered for the thread, then drops
   * the oldest entries beyond `cap`.
   *
   * @returns whether it was added, and how many old entries the cap dropped.
   */
  async add(threadId: string, messageKey: string, message: Record<string, unknown>, cap: number): Promise<{ added: boolean; dropped: number }> {
    return this.db.transaction(async (tx) => {
      const inserted = await tx
        .insert(followUps)
        .values({ threadId, messageKey, message: jsonbSafe(message) as Record<string, unknown> })
        .onConflictDoNothing()
        .returning({ id: followUps.id });
      if (inserted.length === 0) return { added: false, dropped: 0 };
      const overflow = tx
        .select({ id: followUps.id })
        .from(followUps)
        .where(eq(followUps.threadId, threadId))
        .orderBy(sql`${followUps.id} desc`)
        .offset(cap);
      const dropped = await tx.delete(followUps).where(inArray(followUps.id, overflow)).returning({ id: followUps.id });
      return { added: true, dropped: dropped.length };
    });
  }

  /**
   * Removes and returns up to `limit` of the thread's oldest entries. Rows another process is
   * taking at the same moment are skipped, so a batch is only ever taken once.
   */
  async take(threadId: string, limit: number): Promise<BufferedFollowUp[]> {
    const oldest = this.db
      .select({ id: followUps.id })
      .from(followUps)
      .where(eq(followUps.threadId, threadId))
      .orderBy(asc(followUps.id))
      .limit(limit)
      .for('update', { skipLocked: true });
    const rows = await this.db
      .delete(followUps)
      .where(and(eq(followUps.threadId, threadId), inArray(followUps.id, oldest)))
      .returning({ id: followUps.id, messageKey: followUps.messageKey, message: followUps.message });
    return rows.sort((a, b) => a.id - b.id);
  }

  /**
   * Puts a taken batch back where it was (same ids, so still the oldest). An entry whose key was
   * buffered again meanwhile is not doubled.
   */
  async putBack(threadId: string, entries: readonly BufferedFollowUp[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db
      .insert(followUps)
      .values(entries.map((entry) => ({ id: entry.id, threadId, messageKey: entry.messageKey, message: entry.message })))
      .onConflictDoNothing();
  }

  /** Threads with buffered entries, for delivering what a stopped process left behind. */
  async threads(): Promise<string[]> {
    const rows = await this.db.selectDistinct({ threadId: followUps.threadId }).from(followUps);
    return rows.map((row) => row.threadId);
  }

  /** How many entries the thread has buffered. */
  async count(threadId: string): Promise<number> {
    const [row] = await this.db
      .select({ count: sql<number>`count(*)::int` })
      .from(followUps)
      .where(eq(followUps.threadId, threadId));
    return row?.count ?? 0;
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `value` with every string made storable in `jsonb`, which refuses U+0000 and lone surrogates
 * that JavaScript strings (and chat texts) may hold: the first is dropped, the others become U+FFFD.
 */
export function jsonbSafe(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '').replace(LONE_SURROGATE, '\uFFFD');
  if (Array.isArray(value)) return value.map(jsonbSafe);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [jsonbSafe(key) as string, jsonbSafe(item)]));
  }
  return value;
}
