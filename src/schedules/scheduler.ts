import pLimit from 'p-limit';
import { isDuplicateDelivery } from '../channel/journaled-intake.js';
import type { InboundIntake, InboundMessage } from '../channel/types.js';
import type { SchedulesRepo } from '../db/repos/schedules-repo.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ScheduleRecord } from './types.js';
import { nextRunAfter } from './when.js';

export interface SchedulerOptions {
  repo: SchedulesRepo;
  /** The journaled intake every chat message enters by: an occurrence runs exactly as one. */
  intake: InboundIntake;
  logger: Logger;
  now?: () => number;
  /** Longest wait between two looks at the schedules (for those another process made); default 15 s. */
  pollMs?: number;
  /** An occurrence this late fell while no process ran: the schedule's `missed` policy decides; default 60 s. */
  missedAfterMs?: number;
}

const DEFAULT_POLL_MS = 15_000;
/** Due schedules read at a time; a look reads again until fewer come back. */
const BATCH = 100;
/** Occurrences handed over at once: a burst is not held to one database round trip after another. */
const FIRE_CONCURRENCY = 8;
const DEFAULT_MISSED_AFTER_MS = 60_000;
/** How long the scheduler waits after the intake was full before trying again. */
const FULL_INTAKE_RETRY_MS = 1000;

/**
 * Fires due schedules (issue #17). An occurrence becomes a message into the same intake a chat
 * message enters by, with its own id (`schedule:<id>:<due ms>`): the turn journal takes it once,
 * the manager runs it on the schedule's thread and answers into its chat through the outbox, and
 * a crash mid-run takes it up again like any turn. The journal entry comes first and the
 * compare-and-set on `next_run_at` second, so of every process that sees an occurrence due,
 * and across a crash between the two steps, it fires once.
 */
export class Scheduler {
  private readonly now: () => number;
  private readonly pollMs: number;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> | undefined;
  private nextLook: Promise<void> | undefined;
  private isStopped = true;

  constructor(private readonly options: SchedulerOptions) {
    this.now = options.now ?? Date.now;
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.log = options.logger.child({ component: 'scheduler' });
  }

  start(): void {
    this.isStopped = false;
    this.poke();
  }

  /** Looks at the schedules now rather than after the usual wait (one was made or resumed). */
  poke(): void {
    void this.lookNow();
  }

  /**
   * Fires what is due now and resolves once that is handed over. During a look, the next one
   * starts when it ends (the call may be for a schedule that look read too early to see); calls
   * meanwhile share that next look.
   */
  lookNow(): Promise<void> {
    if (this.isStopped) return Promise.resolve();
    this.nextLook ??= (this.looking ?? Promise.resolve()).then(() => {
      this.nextLook = undefined;
      if (this.isStopped) return;
      clearTimeout(this.timer);
      const looking = this.look().finally(() => {
        if (this.looking === looking) this.looking = undefined;
      });
      this.looking = looking;
      return looking;
    });
    return this.nextLook;
  }

  /** Stops firing; an occurrence being handed over finishes first. */
  async stop(): Promise<void> {
    this.isStopped = true;
    clearTimeout(this.timer);
    await this.nextLook;
    await this.looking;
  }

  /** One look: fires what is due, then sleeps until the next occurrence (at most `pollMs`). */
  private async look(): Promise<void> {
    let waitMs = this.pollMs;
    try {
      const { isIntakeFull } = await this.fireDue();
      const next = await this.options.repo.nextDueAt();
      if (next !== undefined) waitMs = Math.min(waitMs, Math.max(0, next.getTime() - this.now()));
      if (isIntakeFull) waitMs = Math.max(waitMs, FULL_INTAKE_RETRY_MS);
    } catch (error) {
      this.log.warn({ err: describeError(error) }, 'could not look at the schedules; trying again');
    }
    if (this.isStopped) return;
    this.timer = setTimeout(() => this.poke(), waitMs);
    this.timer.unref();
  }

  /** Fires everything due now, a batch at a time, several occurrences at once; stops at a full intake. */
  private async fireDue(): Promise<{ isIntakeFull: boolean }> {
    const limit = pLimit(FIRE_CONCURRENCY);
    for (;;) {
      const due = await this.options.repo.due(new Date(this.now()), BATCH);
      let isIntakeFull = false;
      await Promise.all(
        due.map((schedule) =>
          limit(async () => {
            if (this.isStopped || isIntakeFull) return;
            if ((await this.fire(schedule)) === 'intake_full') isIntakeFull = true;
          }),
        ),
      );
      if (isIntakeFull || due.length < BATCH || this.isStopped) return { isIntakeFull };
    }
  }

  /** Hands one due occurrence to the intake and moves the schedule on. */
  private async fire(schedule: ScheduleRecord): Promise<'fired' | 'skipped' | 'intake_full'> {
    const dueAt = schedule.nextRunAt as Date;
    const now = this.now();
    const log = this.log.child({ scheduleId: schedule.id, dueAt: dueAt.toISOString() });
    let next: Date | undefined;
    try {
      // Missed occurrences are never made up one by one: the next is the first after now.
      next = nextRunAfter(schedule.spec, new Date(Math.max(now, dueAt.getTime())));
    } catch (error) {
      // A spec this build cannot read would fail every look, and hold up those due after it.
      log.error({ err: describeError(error) }, 'schedule cannot be read; paused');
      await this.options.repo.setState(schedule.id, undefined, 'paused', undefined);
      return 'skipped';
    }
    if (now - dueAt.getTime() > (this.options.missedAfterMs ?? DEFAULT_MISSED_AFTER_MS) && schedule.missed === 'skip') {
      await this.options.repo.advance(schedule.id, dueAt, next, undefined);
      log.info('missed while no process ran; skipped as the schedule says');
      return 'skipped';
    }
    try {
      const reservation = await this.options.intake.reserve();
      await reservation.commit(occurrenceOf(schedule, dueAt, now));
    } catch (error) {
      if (isIntakeFull(error)) {
        log.warn('the intake is full; the occurrence waits for room');
        return 'intake_full';
      }
      // Taken already: another process fired it, or this one did before a crash.
      if (!isDuplicateDelivery(error)) throw error;
    }
    const isMine = await this.options.repo.advance(schedule.id, dueAt, next, new Date(now));
    if (isMine) log.info({ next: next?.toISOString() }, 'schedule fired');
    return 'fired';
  }
}

/** The message an occurrence runs as: the schedule's origin, its task, its own id and thread, a new reply in the chat. */
export function occurrenceOf(schedule: ScheduleRecord, dueAt: Date, now: number): InboundMessage {
  return {
    ...schedule.origin,
    text: schedule.task,
    kind: 'chat',
    messageId: `schedule:${schedule.id}:${dueAt.getTime()}`,
    replyTo: {},
    receivedAt: now,
    scheduled: { scheduleId: schedule.id, threadId: schedule.threadId },
  };
}

function isIntakeFull(error: unknown): boolean {
  return error instanceof AppError && (error.code === 'INBOUND_QUEUE_FULL' || error.code === 'INBOUND_QUEUE_CLOSED');
}
