import { and, desc, eq, sql } from 'drizzle-orm';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { type Database, FOREIGN_KEY_VIOLATION, sqlState } from '../../db/index.js';
import {
  GOAL_ACTIONS,
  GOAL_VERDICTS,
  type GoalAction,
  type GoalEvaluation,
  type GoalVerdict,
  goalEvaluations,
  threadGoals,
  threads,
} from '../../db/schema/index.js';
import { NotFoundError } from '../../errors.js';
import { checkMaxContinuations, MAX_CONTINUATIONS, normalizeObjective } from './objective.js';

/** The active goal of a thread. */
export interface Goal {
  threadId: string;
  /** Normalized objective text (see `normalizeObjective`). */
  objective: string;
  /** Hidden continuations allowed after one visible user turn, 0..8. */
  maxContinuations: number;
  /** The latest verdict that did not clear the goal; absent until the first evaluation. */
  lastEvaluation?: GoalEvaluation;
  createdAt: Date;
  updatedAt: Date;
}

/** One stored verdict from `goal_evaluations`, the audit trail of a goal loop. */
export interface GoalEvaluationRecord {
  id: string;
  threadId: string;
  /** The run whose visible turn was judged; absent when the caller had none. */
  runId?: string;
  objective: string;
  verdict: GoalVerdict;
  reason: string;
  evidence: string;
  action: GoalAction;
  standDownReason?: string;
  createdAt: Date;
}

export interface RecordEvaluationInput {
  threadId: string;
  runId?: string | undefined;
  /** The objective that was judged; the active goal is only touched while it still has this text. */
  objective: string;
  evaluation: GoalEvaluation;
}

const evaluationJsonSchema = z.object({
  verdict: z.enum(GOAL_VERDICTS),
  reason: z.string(),
  evidence: z.string(),
  action: z.enum(GOAL_ACTIONS),
  stand_down_reason: z.string().optional(),
  evaluated_at: z.string().describe('ISO 8601 time of the verdict.'),
});

/** The HTTP shape of a goal (`GET/PUT /api/threads/:id/goal`); snake_case like the rest of the API. */
export const goalJsonSchema = z.object({
  objective: z.string(),
  max_continuations: z.number().int().min(0).max(MAX_CONTINUATIONS),
  last_evaluation: evaluationJsonSchema.nullable().describe('Latest verdict that did not clear the goal; null before the first.'),
  created_at: z.string(),
  updated_at: z.string(),
});

export type GoalJson = z.infer<typeof goalJsonSchema>;

/** A goal as the HTTP API returns it; timestamps as ISO 8601 strings. */
export function toGoalJson(goal: Goal): GoalJson {
  const evaluation = goal.lastEvaluation;
  return {
    objective: goal.objective,
    max_continuations: goal.maxContinuations,
    last_evaluation: evaluation
      ? {
          verdict: evaluation.verdict,
          reason: evaluation.reason,
          evidence: evaluation.evidence,
          action: evaluation.action,
          ...(evaluation.standDownReason === undefined ? {} : { stand_down_reason: evaluation.standDownReason }),
          evaluated_at: evaluation.evaluatedAt,
        }
      : null,
    created_at: goal.createdAt.toISOString(),
    updated_at: goal.updatedAt.toISOString(),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Thread goals and their verdicts in the database. At most one goal per thread; a thread's goal
 * and evaluations go when the thread is deleted (foreign keys cascade).
 */
export class GoalStore {
  constructor(private readonly db: Database) {}

  /** The thread's active goal, or `undefined` (also for an unknown or malformed thread id). */
  async get(threadId: string): Promise<Goal | undefined> {
    if (!UUID.test(threadId)) return undefined;
    const [row] = await this.db.select().from(threadGoals).where(eq(threadGoals.threadId, threadId));
    return row ? toGoal(row) : undefined;
  }

  /**
   * Sets the thread's goal, replacing any existing one: a replacement starts fresh, with a new
   * `createdAt`, no `lastEvaluation`, and `maxContinuations` defaulting to 8 again.
   *
   * @throws AppError `UNPROCESSABLE` (422) for an empty or too long objective, or a
   *   `maxContinuations` outside 0..8.
   * @throws NotFoundError (404) when the thread does not exist.
   */
  async set(threadId: string, objective: string, options: { maxContinuations?: number } = {}): Promise<Goal> {
    const normalized = normalizeObjective(objective);
    const maxContinuations = checkMaxContinuations(options.maxContinuations ?? MAX_CONTINUATIONS);
    if (!UUID.test(threadId)) throw new NotFoundError('Thread');
    const fresh = { objective: normalized, maxContinuations, lastEvaluation: null, createdAt: sql`now()`, updatedAt: sql`now()` };
    try {
      const [row] = await this.db
        .insert(threadGoals)
        .values({ threadId, ...fresh })
        .onConflictDoUpdate({ target: threadGoals.threadId, set: fresh })
        .returning();
      return toGoal(row as typeof threadGoals.$inferSelect);
    } catch (error) {
      if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw new NotFoundError('Thread');
      throw error;
    }
  }

  /**
   * Active goals with their thread's metadata, most recently changed first, at most `limit`; only
   * threads whose metadata `owner_user_id` is `ownerUserId` when it is given.
   */
  async list(options: { ownerUserId?: string; limit: number }): Promise<Array<{ goal: Goal; threadMetadata: Record<string, unknown> }>> {
    const owned = options.ownerUserId === undefined ? undefined : sql`${threads.metadata}->>'owner_user_id' = ${options.ownerUserId}`;
    const rows = await this.db
      .select({ goal: threadGoals, metadata: threads.metadata })
      .from(threadGoals)
      .innerJoin(threads, eq(threads.id, threadGoals.threadId))
      .where(owned)
      .orderBy(desc(threadGoals.updatedAt), threadGoals.threadId)
      .limit(Math.max(1, Math.floor(options.limit)));
    return rows.map((row) => ({ goal: toGoal(row.goal), threadMetadata: row.metadata }));
  }

  /** Removes the thread's goal; `true` when there was one. Its evaluations stay as history. */
  async clear(threadId: string): Promise<boolean> {
    if (!UUID.test(threadId)) return false;
    const deleted = await this.db
      .delete(threadGoals)
      .where(eq(threadGoals.threadId, threadId))
      .returning({ threadId: threadGoals.threadId });
    return deleted.length > 0;
  }

  /**
   * Stores a verdict and applies it to the active goal, in one transaction: `cleared` deletes the
   * goal, any other action sets its `lastEvaluation`. The goal is only touched while its objective
   * is still the one judged; a goal the user cleared or replaced during the evaluation is left
   * alone, and the verdict is stored as history only.
   *
   * @returns `true` when the judged goal was still active (so it was updated or deleted); `false`
   *   when it was gone or replaced, in which case the runtime must not continue on its behalf.
   * @throws NotFoundError (404) when the thread does not exist.
   */
  async recordEvaluation(input: RecordEvaluationInput): Promise<boolean> {
    const { threadId, objective, evaluation } = input;
    if (!UUID.test(threadId)) throw new NotFoundError('Thread');
    try {
      return await this.db.transaction(async (tx) => {
        await tx.insert(goalEvaluations).values({
          // Time-ordered: verdicts recorded within one millisecond (PGlite's now() counts whole ones) still list newest first.
          id: uuidv7(),
          threadId,
          runId: input.runId ?? null,
          objective,
          verdict: evaluation.verdict,
          reason: evaluation.reason,
          evidence: evaluation.evidence,
          action: evaluation.action,
          standDownReason: evaluation.standDownReason ?? null,
        });
        const judgedGoal = and(eq(threadGoals.threadId, threadId), eq(threadGoals.objective, objective));
        const touched =
          evaluation.action === 'cleared'
            ? await tx.delete(threadGoals).where(judgedGoal).returning({ threadId: threadGoals.threadId })
            : await tx
                .update(threadGoals)
                .set({ lastEvaluation: evaluation, updatedAt: sql`now()` })
                .where(judgedGoal)
                .returning({ threadId: threadGoals.threadId });
        return touched.length > 0;
      });
    } catch (error) {
      if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw new NotFoundError('Thread');
      throw error;
    }
  }

  /** The thread's most recent verdicts, newest first, at most `limit` (a positive whole number). */
  async evaluations(threadId: string, limit: number): Promise<GoalEvaluationRecord[]> {
    if (!UUID.test(threadId)) return [];
    const rows = await this.db
      .select()
      .from(goalEvaluations)
      .where(eq(goalEvaluations.threadId, threadId))
      .orderBy(desc(goalEvaluations.createdAt), desc(goalEvaluations.id))
      .limit(Math.max(1, Math.floor(limit)));
    return rows.map((row) => ({
      id: row.id,
      threadId: row.threadId,
      ...(row.runId === null ? {} : { runId: row.runId }),
      objective: row.objective,
      verdict: row.verdict,
      reason: row.reason,
      evidence: row.evidence,
      action: row.action,
      ...(row.standDownReason === null ? {} : { standDownReason: row.standDownReason }),
      createdAt: row.createdAt,
    }));
  }
}

function toGoal(row: typeof threadGoals.$inferSelect): Goal {
  return {
    threadId: row.threadId,
    objective: row.objective,
    maxContinuations: row.maxContinuations,
    ...(row.lastEvaluation ? { lastEvaluation: row.lastEvaluation } : {}),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
