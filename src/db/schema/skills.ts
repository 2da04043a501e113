import { boolean, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** An operator's choice to enable or disable a skill; skills without a row use their default. */
export const skillStates = pgTable('skill_states', {
  name: text('name').primaryKey(),
  enabled: boolean('enabled').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
