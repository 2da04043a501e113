import { and, eq, gte, inArray, lt, type Placeholder, type SQL, sql } from 'drizzle-orm';
import { type Database, FOREIGN_KEY_VIOLATION, sqlState, UNIQUE_VIOLATION } from '../../db/index.js';
import { runs, type TokenUsage, threadGoals, threads } from '../../db/schema/index.js';
import { ConflictError, NotFoundError, ThreadBusyError } from '../../errors.js';
import type { RunInfo, RunStatus } from '../types.js';

type ThreadRow = typeof threads.$inferSelect;
type RunRow = typeof runs.$inferSelect;

const ACTIVE: RunStatus[] = ['pending', 'running'];

/**
 * Whether a run is still this process's to carry on: `held`, or how another process ended it —
 * `cancelled` (a cancel that reached it there) or `taken-over` (any other end: its lease ran out
 * and the run that took the thread marked it failed).
 */
export type RunHold = 'held' | 'cancelled' | 'taken-over';

/** How ending a run went: this process ended it, or how another one had ended it already. */
export type RunEnding = 'finished' | Exclude<RunHold, 'held'>;

/** How another process ended a run this one still ran; a run deleted with its thread counts as cancelled. */
function endedElsewhere(status: RunStatus | null | undefined): Exclude<RunHold, 'held'> {
  return status === 'interrupted' || status === null || status === undefined ? 'cancelled' : 'taken-over';
}

/**
 * A run's status as the statement that ends it found it (a statement's subqueries see the rows as
 * they were before its CTEs changed them): still active means this statement ended it. No row
 * (the thread is gone) counts as ended here.
 */
function endingOf(priorStatus: RunStatus | null | undefined): RunEnding {
  if (priorStatus === undefined || (priorStatus !== null && ACTIVE.includes(priorStatus))) return 'finished';
  return endedElsewhere(priorStatus);
}

function priorStatusOf(runId: string | Placeholder): SQL<RunStatus | null> {
  return sql<RunStatus | null>`(select ${runs.status} from ${runs} where ${runs.id} = ${runId})`;
}

/** Threads and runs in the database: the single source of truth for "is this thread busy". */
export class RunStore {
  private perRun: ReturnType<typeof perRunStatements> | undefined;

  /**
   * @param canBeTakenOver Messages can pass to another process (the Redis bus): a run whose lease
   * lapsed is then not renewed again, since the process that takes its message over may admit a
   * run of its own on the thread at any moment. Otherwise nobody else would answer, and a run
   * renews its lease however late.
   */
  constructor(
    private readonly db: Database,
    private readonly leaseMs: number,
    private readonly canBeTakenOver = false,
  ) {}

  /** The statements every run sends, built on first use. */
  private get statements(): ReturnType<typeof perRunStatements> {
    this.perRun ??= perRunStatements(this.db);
    return this.perRun;
  }

  async createThread(id: string, metadata: Record<string, unknown>, ifExists: 'raise' | 'do_nothing'): Promise<ThreadRow> {
    const inserted = await this.db.insert(threads).values({ id, metadata }).onConflictDoNothing().returning();
    if (inserted[0]) return inserted[0];
    if (ifExists === 'raise') throw new ConflictError(`Thread ${id} already exists.`);
    return this.getThread(id);
  }

  async getThread(id: string): Promise<ThreadRow> {
    const [row] = await this.db.select().from(threads).where(eq(threads.id, id));
    if (!row) throw new NotFoundError('Thread');
    return row;
  }

  async hasActiveRun(threadId: string): Promise<boolean> {
    return (await this.activeRunId(threadId)) !== undefined;
  }

  /** The run holding the thread (active, lease not expired), if any. */
  async activeRunId(threadId: string): Promise<string | undefined> {
    const [row] = await this.db
      .select({ id: runs.id })
      .from(runs)
      .where(and(eq(runs.threadId, threadId), inArray(runs.status, ACTIVE), sql`${runs.leaseExpiresAt} >= now()`))
      .limit(1);
    return row?.id;
  }

  /**
   * Admits a run under multitask strategy `reject`: the partial unique index allows one active
   * run per thread, so two processes racing for the same thread cannot both win. One query when
   * the thread is free, the common case; a run left active by a process that died (its lease ran
   * out) is cleared only when it is what blocks the thread, then the insert is tried once more.
   */
  async admitRun(run: {
    id: string;
    threadId: string;
    assistantId: string;
    metadata: Record<string, unknown>;
    kwargs: Record<string, unknown>;
  }): Promise<RunRow> {
    try {
      return await this.insertRun(run);
    } catch (error) {
      if (sqlState(error) !== UNIQUE_VIOLATION) throw await this.toAdmissionError(error, run.threadId);
    }
    // A run whose lease ran out was left by a process that died; it must not block the thread.
    const expired = await this.db
      .update(runs)
      .set({ status: 'error', error: 'lease expired: the process running it stopped', finishedAt: new Date() })
      .where(and(eq(runs.threadId, run.threadId), inArray(runs.status, ACTIVE), lt(runs.leaseExpiresAt, sql`now()`)))
      .returning({ id: runs.id });
    if (expired.length === 0) {
      // The run that blocked the insert may have ended meanwhile (a process that stalled past its
      // lease stopping its own run): then the thread is free, and the insert is tried once more.
      const activeRunId = await this.activeRunId(run.threadId);
      if (activeRunId !== undefined) throw new ThreadBusyError(run.threadId, activeRunId);
    }
    try {
      return await this.insertRun(run);
    } catch (error) {
      throw await this.toAdmissionError(error, run.threadId);
    }
  }

  private async insertRun(run: Parameters<RunStore['admitRun']>[0]): Promise<RunRow> {
    const [row] = await this.statements.insertRun.execute({ ...run, startedAt: new Date(), leaseExpiresAt: this.leaseDeadline() });
    return row as RunRow;
  }

  /** What a failed insert means to the caller: a busy thread, a missing thread, or the error itself. */
  private async toAdmissionError(error: unknown, threadId: string): Promise<unknown> {
    if (sqlState(error) === UNIQUE_VIOLATION) return new ThreadBusyError(threadId, await this.activeRunId(threadId));
    // The foreign key answers "does the thread exist" without a query of its own per run.
    if (sqlState(error) === FOREIGN_KEY_VIOLATION) return new NotFoundError('Thread');
    return error;
  }

  async getRun(threadId: string, runId: string): Promise<RunRow> {
    const [row] = await this.db
      .select()
      .from(runs)
      .where(and(eq(runs.id, runId), eq(runs.threadId, threadId)));
    if (!row) throw new NotFoundError('Run');
    return row;
  }

  /**
   * Extends the lease while the run is active. Says so when another process ended it meanwhile:
   * a cancel that reached it there, or a takeover after its lease ran out (the event loop stalled
   * past it, and the thread was admitted to a run of the process that took the message over).
   * Where messages can be taken over, a lease that lapsed counts as taken over already.
   */
  async renewLease(runId: string): Promise<RunHold> {
    const isHeld = and(eq(runs.id, runId), inArray(runs.status, ACTIVE), this.canBeTakenOver ? gte(runs.leaseExpiresAt, sql`now()`) : undefined);
    const [row] = await this.db.update(runs).set({ leaseExpiresAt: this.leaseDeadline() }).where(isHeld).returning({ status: runs.status });
    if (row) return 'held';
    const [ended] = await this.db.select({ status: runs.status }).from(runs).where(eq(runs.id, runId));
    return endedElsewhere(ended?.status);
  }

  /**
   * Records how the run ended and touches its thread, in one statement. Resolves `finished`, or
   * how another process had ended the run already (then nothing is changed).
   */
  async finishRun(
    run: { id: string; threadId: string },
    outcome: { status: RunStatus; error?: string; usage?: TokenUsage },
  ): Promise<RunEnding> {
    const now = new Date();
    const finished = this.db.$with('finished_run', {}).as(
      this.db
        .update(runs)
        .set({ status: outcome.status, error: outcome.error ?? null, usage: outcome.usage ?? null, finishedAt: now, updatedAt: now })
        .where(and(eq(runs.id, run.id), inArray(runs.status, ACTIVE)))
        .getSQL(),
    );
    const [row] = await this.db
      .with(finished)
      .update(threads)
      .set({ updatedAt: now })
      .where(eq(threads.id, run.threadId))
      .returning({ priorStatus: priorStatusOf(run.id) });
    return endingOf(row?.priorStatus);
  }

  /**
   * `finishRun`, unless the thread has a goal: then nothing is changed and the caller judges the
   * goal first (and finishes the run after). One statement either way, so a run on a thread
   * without a goal (the common case) ends in the same round trip that looked for one, at the
   * moment the goal loop would have looked. Resolves `finished` when the run was finished, `goal`
   * when the thread has one, or how another process had ended the run already.
   */
  async finishRunUnlessGoal(
    run: { id: string; threadId: string },
    outcome: { status: RunStatus; error?: string; usage?: TokenUsage },
  ): Promise<RunEnding | 'goal'> {
    const [row] = await this.statements.finishRunUnlessGoal.execute({
      runId: run.id,
      threadId: run.threadId,
      status: outcome.status,
      error: outcome.error ?? null,
      usage: outcome.usage === undefined ? null : JSON.stringify(outcome.usage),
      // Text: drizzle's postgres-js driver hands timestamps to the wire as the strings it makes of them.
      now: new Date().toISOString(),
    });
    return row?.hasGoal === true ? 'goal' : endingOf(row?.priorStatus);
  }

  /** Marks an active run interrupted, for a cancel that reaches a run this process does not hold. */
  async requestCancel(runId: string): Promise<void> {
    await this.db
      .update(runs)
      .set({ status: 'interrupted', finishedAt: new Date(), updatedAt: new Date() })
      .where(and(eq(runs.id, runId), inArray(runs.status, ACTIVE)));
  }

  /** After a restart of the only process, every active run is an orphan. */
  async failAllActiveRuns(reason: string): Promise<number> {
    const rows = await this.db
      .update(runs)
      .set({ status: 'error', error: reason, finishedAt: new Date() })
      .where(inArray(runs.status, ACTIVE))
      .returning({ id: runs.id });
    return rows.length;
  }

  private leaseDeadline(): Date {
    return new Date(Date.now() + this.leaseMs);
  }
}

/**
 * The two statements every run sends, admission and end, as drizzle prepared queries: built once
 * with placeholders, since building a query costs drizzle more CPU than PGlite needs to run it.
 */
function perRunStatements(db: Database) {
  const placeholder = sql.placeholder;
  // Runs start at once (no queue behind reject), so they are born running.
  const insertRun = db
    .insert(runs)
    .values({
      id: placeholder('id'),
      threadId: placeholder('threadId'),
      assistantId: placeholder('assistantId'),
      metadata: placeholder('metadata'),
      kwargs: placeholder('kwargs'),
      status: 'running',
      startedAt: placeholder('startedAt'),
      leaseExpiresAt: placeholder('leaseExpiresAt'),
    })
    .returning()
    .prepare('insert_run');

  const threadId = placeholder('threadId');
  const now = sql`${placeholder('now')}::timestamptz`;
  const goal = db.$with('goal').as(db.select({ threadId: threadGoals.threadId }).from(threadGoals).where(eq(threadGoals.threadId, threadId)));
  const noGoal = sql`not exists (select 1 from ${goal})`;
  // Data-modifying CTEs always run to completion, whether or not the main query reads them.
  // Error and usage are placeholders as they are (not through the columns' encoders), so absent ones are SQL null.
  const finished = db.$with('finished_run', {}).as(
    db
      .update(runs)
      .set({ status: sql`${placeholder('status')}`, error: sql`${placeholder('error')}`, usage: sql`${placeholder('usage')}::jsonb`, finishedAt: now, updatedAt: now })
      .where(and(eq(runs.id, placeholder('runId')), inArray(runs.status, ACTIVE), noGoal))
      .getSQL(),
  );
  const touched = db.$with('touched_thread', {}).as(db.update(threads).set({ updatedAt: now }).where(and(eq(threads.id, threadId), noGoal)).getSQL());
  const finishRunUnlessGoal = db
    .with(goal, finished, touched)
    // The main query sees the rows as they were before the CTEs changed them.
    .select({
      hasGoal: sql<boolean>`exists (select 1 from ${goal})`,
      priorStatus: priorStatusOf(placeholder('runId')),
    })
    .from(threads)
    .where(eq(threads.id, threadId))
    .prepare('finish_run_unless_goal');

  return { insertRun, finishRunUnlessGoal };
}

export function toRunInfo(row: RunRow): RunInfo {
  return {
    run_id: row.id,
    thread_id: row.threadId,
    assistant_id: row.assistantId,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    metadata: row.metadata,
    multitask_strategy: 'reject',
    kwargs: row.kwargs,
  };
}
