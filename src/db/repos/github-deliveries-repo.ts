import { and, eq, lt, sql } from 'drizzle-orm';
import type { Database } from '../index.js';
import { type DeliveryStatus, githubDeliveries } from '../schema/index.js';

/**
 * A delivery left in `processing` this long is taken to belong to a process that died mid-way, and
 * runs again on redelivery. A fan-out only enqueues (it takes milliseconds), so a live one never
 * gets near it.
 */
export const STALE_PROCESSING_MS = 10 * 60 * 1000;

/** What {@link GitHubDeliveriesRepo.begin} found for a delivery id. */
export type DeliveryClaim =
  /** Ours to run: never seen, or seen and failed (or stuck in `processing` past {@link STALE_PROCESSING_MS}). */
  | { kind: 'new' }
  /** Already ran to the end; `summary` is what was answered then. */
  | { kind: 'done'; summary: Record<string, unknown> }
  /** Another request is running it right now. */
  | { kind: 'in_progress' };

interface ClaimRow {
  claimed: boolean;
  status: DeliveryStatus | null;
  summary: unknown;
}

/**
 * GitHub webhook deliveries by `X-GitHub-Delivery`, so a redelivery (same id) of one that went
 * through is answered without running again, and one that failed runs again. Ids come from
 * GitHub (a GUID per event); nothing here reads payloads.
 */
export class GitHubDeliveriesRepo {
  constructor(
    private readonly db: Database,
    private readonly staleAfterMs: number = STALE_PROCESSING_MS,
  ) {}

  /**
   * Claims `deliveryId` for processing, in one statement, so two concurrent requests with the same
   * id never both get `new`: inserts a `processing` row, or takes over a `failed` one (or one stuck
   * in `processing` for {@link STALE_PROCESSING_MS}); otherwise reports what the row holds.
   */
  async begin(deliveryId: string, event: string): Promise<DeliveryClaim> {
    const t = githubDeliveries;
    const stale = sql`now() - make_interval(secs => ${this.staleAfterMs / 1000})`;
    // The outer select reads the snapshot from before the insert: no row = it was new (or another
    // transaction inserted it concurrently, which `claimed = false` tells apart).
    const result = await this.db.execute(sql`
      with claim as (
        insert into ${t} (${sql.identifier(t.deliveryId.name)}, ${sql.identifier(t.event.name)}, ${sql.identifier(t.status.name)})
        values (${deliveryId}, ${event}, 'processing')
        on conflict (${sql.identifier(t.deliveryId.name)}) do update
          set ${sql.identifier(t.status.name)} = 'processing', ${sql.identifier(t.event.name)} = excluded.${sql.identifier(t.event.name)},
              ${sql.identifier(t.summary.name)} = null, ${sql.identifier(t.updatedAt.name)} = now()
          where ${t.status} = 'failed' or (${t.status} = 'processing' and ${t.updatedAt} < ${stale})
        returning 1
      )
      select exists (select 1 from claim) as claimed, d.${sql.identifier(t.status.name)} as status, d.${sql.identifier(t.summary.name)} as summary
      from (select 1) as one
      left join ${t} as d on d.${sql.identifier(t.deliveryId.name)} = ${deliveryId}`);
    const row = rowsOf<ClaimRow>(result)[0];
    if (!row || row.claimed) return { kind: 'new' };
    if (row.status === 'done') return { kind: 'done', summary: asSummary(row.summary) };
    // `processing` and fresh, or inserted by a concurrent request after our snapshot.
    return { kind: 'in_progress' };
  }

  /** Marks the delivery done and stores `summary`, which a redelivery is answered with. */
  async finish(deliveryId: string, summary: Record<string, unknown>): Promise<void> {
    await this.db
      .update(githubDeliveries)
      .set({ status: 'done', summary, updatedAt: sql`now()` })
      .where(eq(githubDeliveries.deliveryId, deliveryId));
  }

  /** Marks the delivery failed, so its redelivery runs again. */
  async fail(deliveryId: string): Promise<void> {
    await this.db
      .update(githubDeliveries)
      .set({ status: 'failed', updatedAt: sql`now()` })
      .where(eq(githubDeliveries.deliveryId, deliveryId));
  }

  /**
   * Deletes deliveries received before `olderThan` that are no longer running. GitHub keeps
   * deliveries redeliverable for 3 days (7 on GHES), so older rows can go.
   *
   * @returns how many rows were deleted.
   */
  async prune(olderThan: Date): Promise<number> {
    const staleOrSettled = sql`(${githubDeliveries.status} <> 'processing' or ${githubDeliveries.updatedAt} < now() - make_interval(secs => ${this.staleAfterMs / 1000}))`;
    const deleted = await this.db
      .delete(githubDeliveries)
      .where(and(lt(githubDeliveries.receivedAt, olderThan), staleOrSettled))
      .returning({ deliveryId: githubDeliveries.deliveryId });
    return deleted.length;
  }
}

/** Rows of a raw `execute`: postgres-js returns an array, PGlite an object with `rows`. */
function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/** jsonb arrives parsed from both drivers; a string (a driver configured otherwise) is parsed here. */
function asSummary(value: unknown): Record<string, unknown> {
  const parsed = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}
