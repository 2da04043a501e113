import { index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const DELIVERY_STATUSES = ['processing', 'done', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * GitHub webhook deliveries by `X-GitHub-Delivery`: a redelivery of one that succeeded is
 * answered without running again; one that failed (or whose process died mid-way) runs again.
 */
export const githubDeliveries = pgTable(
  'github_deliveries',
  {
    deliveryId: text('delivery_id').primaryKey(),
    event: text('event').notNull(),
    status: text('status').$type<DeliveryStatus>().notNull(),
    /** The dispatch summary answered to GitHub, replayed for a duplicate of a finished delivery. */
    summary: jsonb('summary').$type<Record<string, unknown>>(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('github_deliveries_received_idx').on(t.receivedAt)],
);
