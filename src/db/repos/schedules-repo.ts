import { and, asc, count, eq, inArray, lte, min, type SQL, sql } from 'drizzle-orm';
import type { MissedPolicy, NewSchedule, ScheduleOrigin, ScheduleRecord, ScheduleState } from '../../schedules/types.js';
import type { ScheduleSpec } from '../../schedules/when.js';
import type { Database } from '../index.js';
import { schedulePreferences, schedules } from '../schema/index.js';
import { jsonbSafe } from './follow-ups-repo.js';

type ScheduleRow = typeof schedules.$inferSelect;

/** States in which a schedule still counts: it runs, or will again once resumed. */
const LIVE_STATES: ScheduleState[] = ['active', 'paused'];

/**
 * The schedules, in the database every process shares. Firing is claimed with a compare-and-set
 * on `next_run_at` ({@link SchedulesRepo.advance}): of the processes that saw one occurrence due,
 * exactly one moves it on.
 */
export class SchedulesRepo {
  private advanceStatement: ReturnType<SchedulesRepo['prepareAdvance']> | undefined;

  constructor(private readonly db: Database) {}

  /** Stores a new schedule; false when its id is taken (the caller draws another). */
  async insert(schedule: NewSchedule): Promise<boolean> {
    const inserted = await this.db
      .insert(schedules)
      .values({
        id: schedule.id,
        ownerUserId: schedule.ownerUserId,
        channel: schedule.origin.channel,
        chatId: schedule.origin.chatId,
        topicId: schedule.origin.topicId ?? '',
        origin: jsonbSafe(schedule.origin) as Record<string, unknown>,
        threadId: schedule.threadId,
        task: schedule.task,
        spec: schedule.spec as unknown as Record<string, unknown>,
        missed: schedule.missed,
        nextRunAt: schedule.nextRunAt ?? null,
      })
      .onConflictDoNothing()
      .returning({ id: schedules.id });
    return inserted.length > 0;
  }

  async get(id: string): Promise<ScheduleRecord | undefined> {
    const [row] = await this.db.select().from(schedules).where(eq(schedules.id, id));
    return row === undefined ? undefined : toRecord(row);
  }

  /**
   * Active and paused schedules, oldest first: the owner's (every owner's when undefined), only
   * those made in `chat` when given; at most `limit`.
   */
  async listLive(ownerUserId: string | undefined, chat?: { channel: string; chatId: string; topicId?: string | undefined }, limit = 1000): Promise<ScheduleRecord[]> {
    const where: SQL[] = [inArray(schedules.state, LIVE_STATES)];
    if (ownerUserId !== undefined) where.push(eq(schedules.ownerUserId, ownerUserId));
    if (chat !== undefined) {
      where.push(eq(schedules.channel, chat.channel), eq(schedules.chatId, chat.chatId), eq(schedules.topicId, chat.topicId ?? ''));
    }
    const rows = await this.db
      .select()
      .from(schedules)
      .where(and(...where))
      .orderBy(asc(schedules.createdAt), asc(schedules.id))
      .limit(limit);
    return rows.map(toRecord);
  }

  /** How many active or paused schedules the owner has. */
  async countLive(ownerUserId: string): Promise<number> {
    const [row] = await this.db
      .select({ n: count() })
      .from(schedules)
      .where(and(eq(schedules.ownerUserId, ownerUserId), inArray(schedules.state, LIVE_STATES)));
    return row?.n ?? 0;
  }

  /** Active schedules whose next occurrence is at or before `now`, the most overdue first. */
  async due(now: Date, limit: number): Promise<ScheduleRecord[]> {
    const rows = await this.db
      .select()
      .from(schedules)
      .where(and(eq(schedules.state, 'active'), lte(schedules.nextRunAt, now)))
      .orderBy(asc(schedules.nextRunAt))
      .limit(limit);
    return rows.map(toRecord);
  }

  /** When the soonest active schedule is due; undefined when none is. */
  async nextDueAt(): Promise<Date | undefined> {
    const [row] = await this.db
      .select({ at: min(schedules.nextRunAt) })
      .from(schedules)
      .where(eq(schedules.state, 'active'));
    return row?.at ?? undefined;
  }

  /**
   * Moves an active schedule from the occurrence `from` to `next` (undefined: nothing more is due,
   * the schedule is done). The claim on `from`: true for exactly one caller, false when another
   * process moved it first, or it was paused or cancelled meanwhile.
   */
  async advance(id: string, from: Date, next: Date | undefined, ranAt: Date | undefined): Promise<boolean> {
    this.advanceStatement ??= this.prepareAdvance();
    const moved = await this.advanceStatement.execute({
      id,
      from: from.toISOString(),
      next: next?.toISOString() ?? null,
      ranAt: ranAt?.toISOString() ?? null,
    });
    return moved.length > 0;
  }

  /** Built once: every occurrence sends it, and building a drizzle query costs more than running it on PGlite. */
  private prepareAdvance() {
    const { placeholder } = sql;
    const next = sql`${placeholder('next')}::timestamptz`;
    return this.db
      .update(schedules)
      .set({
        nextRunAt: next,
        // Nothing more is due: a one-off that ran is done.
        state: sql`case when ${next} is null then 'done' else ${schedules.state} end`,
        lastRunAt: sql`coalesce(${placeholder('ranAt')}::timestamptz, ${schedules.lastRunAt})`,
        updatedAt: sql`now()`,
      })
      .where(and(eq(schedules.id, placeholder('id')), eq(schedules.state, 'active'), eq(schedules.nextRunAt, sql`${placeholder('from')}::timestamptz`)))
      .returning({ id: schedules.id })
      .prepare('advance_schedule');
  }

  /** Sets what a start does with missed occurrences of a live schedule; only the owner's unless `ownerUserId` is undefined. */
  async setMissed(id: string, ownerUserId: string | undefined, missed: MissedPolicy): Promise<ScheduleRecord | undefined> {
    const where: SQL[] = [eq(schedules.id, id), inArray(schedules.state, LIVE_STATES)];
    if (ownerUserId !== undefined) where.push(eq(schedules.ownerUserId, ownerUserId));
    const [row] = await this.db.update(schedules).set({ missed, updatedAt: new Date() }).where(and(...where)).returning();
    return row === undefined ? undefined : toRecord(row);
  }

  /**
   * Sets a live schedule's state (pause, resume with its next occurrence, cancel). Only the owner's,
   * unless `ownerUserId` is undefined (the operator). Resolves with the schedule as it now is, or
   * undefined when there is no such live schedule for that owner.
   */
  async setState(id: string, ownerUserId: string | undefined, state: ScheduleState, nextRunAt: Date | undefined): Promise<ScheduleRecord | undefined> {
    const where: SQL[] = [eq(schedules.id, id), inArray(schedules.state, LIVE_STATES)];
    if (ownerUserId !== undefined) where.push(eq(schedules.ownerUserId, ownerUserId));
    const [row] = await this.db
      .update(schedules)
      .set({ state, nextRunAt: nextRunAt ?? null, updatedAt: new Date() })
      .where(and(...where))
      .returning();
    return row === undefined ? undefined : toRecord(row);
  }

  /** The time zone the person chose for their schedules, or undefined when they chose none. */
  async timezoneOf(ownerUserId: string): Promise<string | undefined> {
    const [row] = await this.db.select({ timezone: schedulePreferences.timezone }).from(schedulePreferences).where(eq(schedulePreferences.ownerUserId, ownerUserId));
    return row?.timezone;
  }

  async setTimezone(ownerUserId: string, timezone: string): Promise<void> {
    await this.db
      .insert(schedulePreferences)
      .values({ ownerUserId, timezone })
      .onConflictDoUpdate({ target: schedulePreferences.ownerUserId, set: { timezone, updatedAt: new Date() } });
  }
}

function toRecord(row: ScheduleRow): ScheduleRecord {
  return {
    id: row.id,
    ownerUserId: row.ownerUserId,
    origin: row.origin as unknown as ScheduleOrigin,
    threadId: row.threadId,
    task: row.task,
    spec: row.spec as unknown as ScheduleSpec,
    missed: row.missed as MissedPolicy,
    state: row.state as ScheduleState,
    nextRunAt: row.nextRunAt ?? undefined,
    lastRunAt: row.lastRunAt ?? undefined,
    createdAt: row.createdAt,
  };
}
