import { and, eq, lt, type SQL, sql } from 'drizzle-orm';
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
  private readonly expired: SQL;
  /** The claim every message sends, built once (a drizzle prepared query: building costs more than running it on PGlite). */
  private claim: ReturnType<SqlDedupeStore['prepareClaim']> | undefined;

  constructor(
    private readonly db: Database,
    private readonly ttlMs: number = DEDUPE_TTL_MS,
  ) {
    this.expired = sql`now() - make_interval(secs => ${this.ttlMs / 1000})`;
  }

  async acquire(key: DedupeKey): Promise<boolean> {
    this.claim ??= this.prepareClaim();
    const rows = await this.claim.execute({ ...key });
    if (rows.length > 0) await this.purgeExpired();
    return rows.length > 0;
  }

  /** One statement: insert, or take over a row whose TTL ran out; no row back means duplicate. */
  private prepareClaim() {
    const { placeholder } = sql;
    return this.db
      .insert(inboundDedupe)
      .values({ channel: placeholder('channel'), workspaceId: placeholder('workspaceId'), chatId: placeholder('chatId'), messageId: placeholder('messageId') })
      .onConflictDoUpdate({
        target: [inboundDedupe.channel, inboundDedupe.workspaceId, inboundDedupe.chatId, inboundDedupe.messageId],
        set: { firstSeen: sql`now()` },
        setWhere: lt(inboundDedupe.firstSeen, this.expired),
      })
      .returning({ channel: inboundDedupe.channel })
      .prepare('claim_inbound');
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

  private async purgeExpired(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurgeAt < PURGE_INTERVAL_MS) return;
    this.lastPurgeAt = now;
    await this.db.delete(inboundDedupe).where(lt(inboundDedupe.firstSeen, this.expired));
  }
}
