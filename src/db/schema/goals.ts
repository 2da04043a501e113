import { index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { threads } from './agent.js';

/** The evaluator's typed verdict on a goal after a visible turn. */
export const GOAL_VERDICTS = ['satisfied', 'not_met_yet', 'needs_user_input', 'blocked', 'evaluation_failed'] as const;
export type GoalVerdict = (typeof GOAL_VERDICTS)[number];

/** What the runtime did with a verdict. */
export const GOAL_ACTIONS = ['cleared', 'continued', 'stood_down'] as const;
export type GoalAction = (typeof GOAL_ACTIONS)[number];

export interface GoalEvaluation {
  verdict: GoalVerdict;
  reason: string;
  evidence: string;
  action: GoalAction;
  /** Why the loop stopped when it did not continue, e.g. `continuation cap reached`. */
  standDownReason?: string;
  evaluatedAt: string;
}

/** The active goal of a thread (at most one); deleted when satisfied or cleared. */
export const threadGoals = pgTable('thread_goals', {
  threadId: uuid('thread_id')
    .primaryKey()
    .references(() => threads.id, { onDelete: 'cascade' }),
  objective: text('objective').notNull(),
  /** Hidden continuations allowed after one visible turn, 0..8. */
  maxContinuations: integer('max_continuations').notNull().default(8),
  lastEvaluation: jsonb('last_evaluation').$type<GoalEvaluation>(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Every verdict ever given, with its reason: the audit trail of a goal loop. */
export const goalEvaluations = pgTable(
  'goal_evaluations',
  {
    id: uuid('id').primaryKey(),
    threadId: uuid('thread_id')
      .notNull()
      .references(() => threads.id, { onDelete: 'cascade' }),
    runId: uuid('run_id'),
    objective: text('objective').notNull(),
    verdict: text('verdict').$type<GoalVerdict>().notNull(),
    reason: text('reason').notNull(),
    evidence: text('evidence').notNull(),
    action: text('action').$type<GoalAction>().notNull(),
    standDownReason: text('stand_down_reason'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('goal_evaluations_thread_idx').on(t.threadId, t.createdAt)],
);
