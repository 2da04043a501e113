import { and, eq, lt, sql } from 'drizzle-orm';
import type { DeliveryClaim, WebhookDeliveries } from '../../channel/types.js';
import { rowsOf } from '../driver-rows.js';
import type { Database } from '../index.js';
import { type DeliveryStatus, webhookDeliveries } from '../schema/index.js';

/**
 * A delivery left in `processing` this long is taken to belong to a process that died mid-way, and
 * runs again on redelivery. A fan-out only enqueues (it takes milliseconds), so a live one never
 * gets near it.
 */
export const STALE_PROCESSING_MS = 10 * 60 * 1000;

interface ClaimRow {
  claimed: boolean;
  status: DeliveryStatus | null;
  summary: unknown;
}

/**
 * Webhook deliveries by the platform's delivery id (GitHub's `X-GitHub-Delivery`), so a
 * redelivery (same id) of one that went through is answered without running again, and one that
 * failed runs again. Ids come from the platform; nothing here reads payloads. Use
 * {@link forPlatform} to hand one platform its own view.
 */
export class WebhookDeliveriesRepo {
  constructor(
    private readonly db: Database,
    private readonly staleAfterMs: number = STALE_PROCESSING_MS,
  ) {}

  /** The deliveries of one platform, as its adapter sees them. */
  forPlatform(platform: string): WebhookDeliveries {
    return {
      begin: (deliveryId, event, options) => this.begin(platform, deliveryId, event, options),
      finish: (deliveryId, summary) => this.finish(platform, deliveryId, summary),
      fail: (deliveryId) => this.fail(platform, deliveryId),
    };
  }

  /**
   * Claims `deliveryId` for processing, in one statement, so two concurrent requests with the same
   * id never both get `new`: inserts a `processing` row, or takes over a `failed` one (or one stuck
   * in `processing` for `staleAfterMs`, default the repo's); otherwise reports what the row holds.
   */
  async begin(platform: string, deliveryId: string, event: string, options: { staleAfterMs?: number } = {}): Promise<DeliveryClaim> {
    const t = webhookDeliveries;
    const column = (c: { name: string }) => sql.identifier(c.name);
    const stale = sql`now() - make_interval(secs => ${(options.staleAfterMs ?? this.staleAfterMs) / 1000})`;
    // The outer select reads the snapshot from before the insert: no row = it was new (or another
    // transaction inserted it concurrently, which `claimed = false` tells apart).
    const result = await this.db.execute(sql`
      with claim as (
        insert into ${t} (${column(t.platform)}, ${column(t.deliveryId)}, ${column(t.event)}, ${column(t.status)})
        values (${platform}, ${deliveryId}, ${event}, 'processing')
        on conflict (${column(t.platform)}, ${column(t.deliveryId)}) do update
          set ${column(t.status)} = 'processing', ${column(t.event)} = excluded.${column(t.event)},
              ${column(t.summary)} = null, ${column(t.updatedAt)} = now()
          where ${t.status} = 'failed' or (${t.status} = 'processing' and ${t.updatedAt} < ${stale})
        returning 1
      )
      select exists (select 1 from claim) as claimed, d.${column(t.status)} as status, d.${column(t.summary)} as summary
      from (select 1) as one
      left join ${t} as d on d.${column(t.platform)} = ${platform} and d.${column(t.deliveryId)} = ${deliveryId}`);
    const row = rowsOf<ClaimRow>(result)[0];
    if (!row || row.claimed) return { kind: 'new' };
    if (row.status === 'done') return { kind: 'done', summary: asSummary(row.summary) };
    // `processing` and fresh, or inserted by a concurrent request after our snapshot.
    return { kind: 'in_progress' };
  }

  /** Marks the delivery done and stores `summary`, which a redelivery is answered with. */
  async finish(platform: string, deliveryId: string, summary: Record<string, unknown>): Promise<void> {
    await this.db
      .update(webhookDeliveries)
      .set({ status: 'done', summary, updatedAt: sql`now()` })
      .where(this.idIs(platform, deliveryId));
  }

  /** Marks the delivery failed, so its redelivery runs again. */
  async fail(platform: string, deliveryId: string): Promise<void> {
    await this.db
      .update(webhookDeliveries)
      .set({ status: 'failed', updatedAt: sql`now()` })
      .where(this.idIs(platform, deliveryId));
  }

  /**
   * Marks every delivery still `processing` failed, so its redelivery runs. Only for the sole
   * process of a deployment, at start, before its channels take events: every such claim is then
   * one a crash left mid-way (a chat message claimed but never committed would otherwise be
   * refused as in progress until it went stale).
   *
   * @returns how many were released.
   */
  async releaseAbandoned(): Promise<number> {
    const released = await this.db
      .update(webhookDeliveries)
      .set({ status: 'failed', updatedAt: sql`now()` })
      .where(eq(webhookDeliveries.status, 'processing'))
      .returning({ deliveryId: webhookDeliveries.deliveryId });
    return released.length;
  }

  /**
   * Deletes deliveries (of every platform) received before `olderThan` that are no longer
   * running. GitHub keeps deliveries redeliverable for 3 days (7 on GHES), so older rows can go.
   *
   * @returns how many rows were deleted.
   */
  async prune(olderThan: Date): Promise<number> {
    const staleOrSettled = sql`(${webhookDeliveries.status} <> 'processing' or ${webhookDeliveries.updatedAt} < now() - make_interval(secs => ${this.staleAfterMs / 1000}))`;
    const deleted = await this.db
      .delete(webhookDeliveries)
      .where(and(lt(webhookDeliveries.receivedAt, olderThan), staleOrSettled))
      .returning({ deliveryId: webhookDeliveries.deliveryId });
    return deleted.length;
  }

  private idIs(platform: string, deliveryId: string) {
    return and(eq(webhookDeliveries.platform, platform), eq(webhookDeliveries.deliveryId, deliveryId));
  }
}


/** jsonb arrives parsed from both drivers; a string (a driver configured otherwise) is parsed here. */
function asSummary(value: unknown): Record<string, unknown> {
  const parsed = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}
