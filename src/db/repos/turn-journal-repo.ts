import { and, eq, isNotNull, isNull, lt, or, type Placeholder, type SQL, sql } from 'drizzle-orm';
import { DEDUPE_TTL_MS, type DedupeKey, type TurnJournal, type UnfinishedTurn } from '../../channel/turn-journal.js';
import type { InboundMessage } from '../../channel/types.js';
import type { Database } from '../index.js';
import { inboundDedupe } from '../schema/index.js';

const PURGE_INTERVAL_MS = 60_000;
/** An unfinished turn nobody took up (scaled out: its queue job was lost) is forgotten after a day. */
const UNFINISHED_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * The turn journal in the database, shared by every process and kept across restarts: a Telegram
 * update redelivered after a crash is still recognised, and a turn the crash interrupted is still
 * there to take up.
 */
export class SqlTurnJournal implements TurnJournal {
  private lastPurgeAt = 0;
  private readonly isExpired: SQL;
  /** A row that no longer holds a turn in flight: finished, or written before the journal kept messages. */
  private readonly isSettled: SQL;
  /** The two statements every message sends, built once (drizzle prepared queries: building costs more than running them on PGlite). */
  private statements: ReturnType<SqlTurnJournal['prepare']> | undefined;

  constructor(
    private readonly db: Database,
    private readonly ttlMs: number = DEDUPE_TTL_MS,
  ) {
    this.isExpired = lt(inboundDedupe.firstSeen, sql`now() - make_interval(secs => ${this.ttlMs / 1000})`);
    this.isSettled = or(isNotNull(inboundDedupe.finishedAt), isNull(inboundDedupe.message)) as SQL;
  }

  async accept(key: DedupeKey, message: InboundMessage): Promise<boolean> {
    this.statements ??= this.prepare();
    const rows = await this.statements.accept.execute({ ...key, message });
    if (rows.length > 0) await this.purgeExpired();
    return rows.length > 0;
  }

  async finish(key: DedupeKey): Promise<void> {
    this.statements ??= this.prepare();
    await this.statements.finish.execute({ ...key });
  }

  async hasFinished(key: DedupeKey): Promise<boolean> {
    const [row] = await this.db.select({ finishedAt: inboundDedupe.finishedAt }).from(inboundDedupe).where(matches(key));
    return row?.finishedAt !== null && row?.finishedAt !== undefined;
  }

  async release(key: DedupeKey): Promise<void> {
    await this.db.delete(inboundDedupe).where(matches(key));
  }

  async resumeUnfinished(): Promise<UnfinishedTurn[]> {
    const rows = await this.db
      .update(inboundDedupe)
      .set({ resumes: sql`${inboundDedupe.resumes} + 1` })
      .where(and(isNull(inboundDedupe.finishedAt), isNotNull(inboundDedupe.message)))
      .returning({ message: inboundDedupe.message, resumes: inboundDedupe.resumes, firstSeen: inboundDedupe.firstSeen });
    return rows
      .map((row) => ({ message: row.message as InboundMessage, resumes: row.resumes, acceptedAt: row.firstSeen.getTime() }))
      .sort((a, b) => a.acceptedAt - b.acceptedAt);
  }

  private prepare() {
    const { placeholder } = sql;
    const key = {
      channel: placeholder('channel'),
      workspaceId: placeholder('workspaceId'),
      chatId: placeholder('chatId'),
      messageId: placeholder('messageId'),
    };
    return {
      // One statement: insert, or take over a settled row whose TTL ran out; no row back means duplicate.
      accept: this.db
        .insert(inboundDedupe)
        .values({ ...key, message: placeholder('message') })
        .onConflictDoUpdate({
          target: [inboundDedupe.channel, inboundDedupe.workspaceId, inboundDedupe.chatId, inboundDedupe.messageId],
          set: { firstSeen: sql`now()`, message: sql`excluded.message`, finishedAt: null, resumes: 0 },
          setWhere: and(this.isExpired, this.isSettled),
        })
        .returning({ channel: inboundDedupe.channel })
        .prepare('accept_turn'),
      // The message goes once the turn ended: the journal keeps no text it no longer needs.
      finish: this.db
        .update(inboundDedupe)
        .set({ finishedAt: sql`now()`, message: null })
        .where(matches(key))
        .prepare('finish_turn'),
    };
  }

  private async purgeExpired(): Promise<void> {
    const now = Date.now();
    if (now - this.lastPurgeAt < PURGE_INTERVAL_MS) return;
    this.lastPurgeAt = now;
    const isAbandoned = lt(inboundDedupe.firstSeen, sql`now() - make_interval(secs => ${UNFINISHED_RETENTION_MS / 1000})`);
    await this.db.delete(inboundDedupe).where(or(and(this.isExpired, this.isSettled), isAbandoned));
  }
}

function matches(key: { [K in keyof DedupeKey]: DedupeKey[K] | Placeholder }): SQL {
  return and(
    eq(inboundDedupe.channel, key.channel),
    eq(inboundDedupe.workspaceId, key.workspaceId),
    eq(inboundDedupe.chatId, key.chatId),
    eq(inboundDedupe.messageId, key.messageId),
  ) as SQL;
}
