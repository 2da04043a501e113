import { index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

export const DELIVERY_STATUSES = ['processing', 'done', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Webhook deliveries by the platform's delivery id (GitHub's `X-GitHub-Delivery`): a redelivery
 * of one that succeeded is answered without running again; one that failed (or whose process died
 * mid-way) runs again.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    platform: text('platform').notNull(),
    deliveryId: text('delivery_id').notNull(),
    event: text('event').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull(),
    /** The summary answered to the platform, replayed for a duplicate of a finished delivery. */
    summary: jsonb('summary').$type<Record<string, unknown>>(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.platform, t.deliveryId] }), index('webhook_deliveries_received_idx').on(t.receivedAt)],
);
