import { and, asc, count, eq, inArray, isNotNull, isNull, lt, lte, type SQL, sql } from 'drizzle-orm';
import type { DeliveryLeft, OutboxCounts, OutboxEntry, OutboxStore, PendingDelivery } from '../../channel/outbox.js';
import type { OutboundFile, ReplyOutcome, ReplyTarget } from '../../channel/types.js';
import type { Database } from '../index.js';
import { outbox } from '../schema/index.js';

type OutboxRow = typeof outbox.$inferSelect;

/** The outbox in the database: every process takes due entries from it, and it outlives restarts. */
export class SqlOutboxStore implements OutboxStore {
  constructor(private readonly db: Database) {}

  async add(delivery: PendingDelivery, state: { nextAttemptAt: number; deadline: number; lastError: string; isDead: boolean }): Promise<number> {
    const [row] = await this.db
      .insert(outbox)
      .values({
        channel: delivery.channel,
        target: delivery.target as unknown as Record<string, unknown>,
        text: delivery.text,
        outcome: (delivery.outcome ?? null) as Record<string, unknown> | null,
        files: delivery.files as unknown as Record<string, unknown>[],
        attempts: 1,
        nextAttemptAt: new Date(state.nextAttemptAt),
        deadline: new Date(state.deadline),
        lastError: state.lastError,
        deadAt: state.isDead ? sql`now()` : null,
      })
      .returning({ id: outbox.id });
    return (row as { id: number }).id;
  }

  async claimDue(limit: number, leaseMs: number): Promise<OutboxEntry[]> {
    // SKIP LOCKED: processes claiming at once each take other entries, none waits on another.
    const due = this.db
      .select({ id: outbox.id })
      .from(outbox)
      .where(and(isNull(outbox.deadAt), lte(outbox.nextAttemptAt, sql`now()`)))
      .orderBy(asc(outbox.nextAttemptAt))
      .limit(limit)
      .for('update', { skipLocked: true });
    const rows = await this.db
      .update(outbox)
      .set({ attempts: sql`${outbox.attempts} + 1`, nextAttemptAt: sql`now() + make_interval(secs => ${leaseMs / 1000})` })
      .where(inArray(outbox.id, due))
      .returning();
    return rows.map(toEntry).sort((a, b) => a.id - b.id);
  }

  async delivered(id: number): Promise<void> {
    await this.db.delete(outbox).where(eq(outbox.id, id));
  }

  async retryLater(id: number, left: DeliveryLeft, nextAttemptAt: number, lastError: string): Promise<void> {
    await this.db
      .update(outbox)
      .set({ ...leftColumns(left), nextAttemptAt: new Date(nextAttemptAt), lastError })
      .where(eq(outbox.id, id));
  }

  async bury(id: number, left: DeliveryLeft, lastError: string): Promise<void> {
    await this.db
      .update(outbox)
      .set({ ...leftColumns(left), lastError, deadAt: sql`now()` })
      .where(eq(outbox.id, id));
  }

  async revive(which: number | 'all', deadline: number): Promise<number> {
    const isDead = isNotNull(outbox.deadAt);
    const rows = await this.db
      .update(outbox)
      .set({ deadAt: null, nextAttemptAt: sql`now()`, deadline: new Date(deadline), attempts: 0 })
      .where(which === 'all' ? isDead : (and(isDead, eq(outbox.id, which)) as SQL))
      .returning({ id: outbox.id });
    return rows.length;
  }

  async list(which: 'pending' | 'dead', limit: number): Promise<OutboxEntry[]> {
    const rows = await this.db
      .select()
      .from(outbox)
      .where(which === 'dead' ? isNotNull(outbox.deadAt) : isNull(outbox.deadAt))
      .orderBy(asc(outbox.id))
      .limit(limit);
    return rows.map(toEntry);
  }

  async counts(): Promise<OutboxCounts> {
    const rows = await this.db
      .select({ isDead: sql<boolean>`${outbox.deadAt} is not null`, entries: count() })
      .from(outbox)
      .groupBy(sql`${outbox.deadAt} is not null`);
    const entriesWhere = (isDead: boolean) => Number(rows.find((row) => row.isDead === isDead)?.entries ?? 0);
    return { pending: entriesWhere(false), dead: entriesWhere(true) };
  }

  async pruneDead(before: number): Promise<number> {
    const rows = await this.db
      .delete(outbox)
      .where(and(isNotNull(outbox.deadAt), lt(outbox.deadAt, new Date(before))))
      .returning({ id: outbox.id });
    return rows.length;
  }
}

function leftColumns(left: DeliveryLeft) {
  return {
    target: left.target as unknown as Record<string, unknown>,
    text: left.text,
    files: left.files as unknown as Record<string, unknown>[],
  };
}

function toEntry(row: OutboxRow): OutboxEntry {
  return {
    id: row.id,
    channel: row.channel,
    target: row.target as unknown as ReplyTarget,
    text: row.text,
    ...(row.outcome === null ? {} : { outcome: row.outcome as unknown as ReplyOutcome }),
    files: row.files as unknown as OutboundFile[],
    attempts: row.attempts,
    createdAt: row.createdAt.getTime(),
    nextAttemptAt: row.nextAttemptAt.getTime(),
    deadline: row.deadline.getTime(),
    ...(row.lastError === null ? {} : { lastError: row.lastError }),
    ...(row.deadAt === null ? {} : { deadAt: row.deadAt.getTime() }),
  };
}
