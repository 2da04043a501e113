import { and, eq, lt, sql } from 'drizzle-orm';
import { DEDUPE_TTL_MS, type DedupeKey, type DedupeStore } from '../../manager/dedupe.js';
import type { Database } from '../index.js';
import { inboundDedupe } from '../schema/index.js';

const PURGE_INTERVAL_MS = 60_000;

/**
 * Dedupe in the database, shared by every process and kept across restarts, so a Telegram
 * update redelivered after a crash is still recognised.
 */
export class SqlDedupeStore implements DedupeStore {
  private lastPurgeAt = 0;

  constructor(
    private readonly db: Database,
    private readonly ttlMs: number = DEDUPE_TTL_MS,
  ) {}

  async acquire(key: DedupeKey): Promise<boolean> {
    const expired = sql`now() - make_interval(secs => ${this.ttlMs / 1000})`;
    // One statement: insert, or take over a row whose TTL ran out; no row back means duplicate.
    const rows = await this.db
      .insert(inboundDedupe)
      .values(key)
      .onConflictDoUpdate({
        target: [inboundDedupe.channel, inboundDedupe.workspaceId, inboundDedupe.chatId, inboundDedupe.messageId],
        set: { firstSeen: sql`now()` },
        setWhere: lt(inboundDedupe.firstSeen, expired),
      })
      .returning({ channel: inboundDedupe.channel });
    if (rows.length > 0) await this.purgeExpired(expired);
    return rows.length > 0;
  }

  async release(key: DedupeKey): Promise<void> {
    await this.db
      .delete(inboundDedupe)
      .where(
        and(
          eq(inboundDedupe.channel, key.channel),
          eq(inboundDedupe.workspaceId, key.workspaceId),
          eq(inboundDedupe.chatId, key.chatId),
          eq(inboundDedupe.messageId, key.messageId),
        ),
      );
  }

  private async purgeExpired(expired: ReturnType<typeof sql>): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurgeAt < PURGE_INTERVAL_MS) return;
    this.lastPurgeAt = now;
    await this.db.delete(inboundDedupe).where(lt(inboundDedupe.firstSeen, expired));
  }
}
