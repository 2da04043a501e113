import { randomInt } from 'node:crypto';
import type { SchedulesRepo } from '../db/repos/schedules-repo.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentRuntime } from '../runtime/types.js';
import { type SchedulesConfig, scheduleTimeZone } from './config.js';
import { SCHEDULE_MESSAGES } from './messages.js';
import type { ScheduleOrigin, ScheduleRecord } from './types.js';
import { isValidTimeZone, nextRunAfter, parseSchedule } from './when.js';

/** What a change to a schedule came to: the schedule as it is now, or a sentence for the person. */
export type ScheduleChange =
  | { ok: true; schedule: ScheduleRecord }
  | { ok: false; reason: 'not_found' | 'too_many' }
  /** What was typed is no schedule: `message` says why, for the person. */
  | { ok: false; reason: 'refused'; message: string };

export interface ScheduleBookOptions {
  repo: SchedulesRepo;
  /** Each schedule gets its own thread there. */
  runtime: Pick<AgentRuntime, 'createThread'>;
  config: SchedulesConfig;
  now?: () => number;
  /** Told after a schedule was made or resumed, so the scheduler looks again before its usual wait. */
  onChange?: () => void;
  logger?: Logger;
}

/** Ids people type: 6 characters without look-alikes (no 0/o, 1/l). */
const ID_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';
const ID_LENGTH = 6;
const ID_ATTEMPTS = 5;

/**
 * The schedules people keep (issue #17): made from what they type, listed, paused, resumed and
 * cancelled, each only by its owner (or the operator). Firing them is the scheduler's.
 */
export class ScheduleBook {
  private readonly now: () => number;
  /** The zone wall-clock words are read in for people who chose none: `schedules.timezone`, else the server's. */
  readonly timezone: string;

  constructor(private readonly options: ScheduleBookOptions) {
    this.now = options.now ?? Date.now;
    this.timezone = scheduleTimeZone(options.config);
  }

  /** The most active and paused schedules one person may have. */
  get maxPerUser(): number {
    return this.options.config.max_per_user;
  }

  /**
   * Makes a schedule from `text` (`every weekday 09:00 summarise the open PRs`), or from a `when`
   * and a `task` apart, for `ownerUserId`, answering into the chat `origin` names. Nothing is
   * stored when the text is refused or the owner has `max_per_user` schedules already.
   */
  async create(input: { ownerUserId: string; origin: ScheduleOrigin } & ({ text: string } | { when: string; task: string })): Promise<ScheduleChange> {
    const now = new Date(this.now());
    const text = 'text' in input ? input.text : `${input.when.trim()} ${input.task.trim()}`;
    const { timezone } = await this.timezoneOf(input.ownerUserId);
    const parsed = parseSchedule(text, { now, timezone, minIntervalSeconds: this.options.config.min_interval_seconds });
    if (!parsed.ok) return { ok: false, reason: 'refused', message: parsed.error };
    // A when given on its own must be read whole: what is left of it would land in the task.
    if ('when' in input && parsed.task !== input.task.trim()) return { ok: false, reason: 'refused', message: SCHEDULE_MESSAGES.whenNotRead(input.when.trim()) };
    if ((await this.options.repo.countLive(input.ownerUserId)) >= this.options.config.max_per_user) return { ok: false, reason: 'too_many' };
    const thread = await this.options.runtime.createThread({
      metadata: { owner_user_id: input.ownerUserId, schedule_source: { provider: input.origin.channel, chat_id: input.origin.chatId } },
    });
    for (let attempt = 0; attempt < ID_ATTEMPTS; attempt++) {
      const schedule = {
        id: newScheduleId(),
        ownerUserId: input.ownerUserId,
        origin: input.origin,
        threadId: thread.thread_id,
        task: parsed.task,
        spec: parsed.spec,
        missed: 'run_once' as const,
        nextRunAt: nextRunAfter(parsed.spec, now),
      };
      if (await this.options.repo.insert(schedule)) {
        this.options.onChange?.();
        return { ok: true, schedule: { ...schedule, state: 'active', lastRunAt: undefined, createdAt: now } };
      }
    }
    throw new Error('could not draw a free schedule id');
  }

  /** The zone `ownerUserId`'s wall-clock words are read in: the one they chose, else the server's. */
  async timezoneOf(ownerUserId: string): Promise<{ timezone: string; isChosen: boolean }> {
    const chosen = await this.options.repo.timezoneOf(ownerUserId);
    return { timezone: chosen ?? this.timezone, isChosen: chosen !== undefined };
  }

  /** Sets the zone the person's new schedules are read in; false for a name that is no IANA zone. Made schedules keep theirs. */
  async setTimezone(ownerUserId: string, timezone: string): Promise<boolean> {
    if (!isValidTimeZone(timezone)) return false;
    // As Intl spells it (`europe/berlin` → `Europe/Berlin`).
    await this.options.repo.setTimezone(ownerUserId, new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone);
    return true;
  }

  /** The owner's active and paused schedules made in this chat, oldest first. */
  list(ownerUserId: string, chat: Pick<ScheduleOrigin, 'channel' | 'chatId' | 'topicId'>): Promise<ScheduleRecord[]> {
    return this.options.repo.listLive(ownerUserId, chat);
  }

  /** Live schedules of `ownerUserId`, or of everyone for the operator (undefined), oldest first. */
  listAll(ownerUserId: string | undefined, limit: number): Promise<ScheduleRecord[]> {
    return this.options.repo.listLive(ownerUserId, undefined, limit);
  }

  /** One of `ownerUserId`'s schedules (any, for the operator), or undefined: another's is not theirs to see. */
  async get(ownerUserId: string | undefined, id: string): Promise<ScheduleRecord | undefined> {
    const schedule = await this.options.repo.get(id.toLowerCase());
    return schedule !== undefined && (ownerUserId === undefined || schedule.ownerUserId === ownerUserId) ? schedule : undefined;
  }

  /** Sets whether a start runs missed occurrences once (`run_once`) or none (`skip`). */
  async setMissed(ownerUserId: string | undefined, id: string, missed: ScheduleRecord['missed']): Promise<ScheduleChange> {
    const changed = await this.options.repo.setMissed(id.toLowerCase(), ownerUserId, missed);
    return changed === undefined ? { ok: false, reason: 'not_found' } : { ok: true, schedule: changed };
  }

  /** Stops an active schedule from firing until resumed. `ownerUserId` undefined: the operator. */
  pause(ownerUserId: string | undefined, id: string): Promise<ScheduleChange> {
    return this.change(ownerUserId, id, async () => ({ state: 'paused', nextRunAt: undefined }));
  }

  /** Lets a paused schedule fire again from its next occurrence after now (missed ones are not made up). */
  resume(ownerUserId: string | undefined, id: string): Promise<ScheduleChange> {
    return this.change(ownerUserId, id, async (schedule) => {
      const next = nextRunAfter(schedule.spec, new Date(this.now()));
      return next === undefined ? { state: 'done', nextRunAt: undefined } : { state: 'active', nextRunAt: next };
    });
  }

  /**
   * Pauses a schedule whose chat refused its answer for good (the bot was removed): until its
   * owner resumes it, it runs the agent for nobody no more. Never rejects.
   */
  async pauseUndeliverable(id: string): Promise<void> {
    try {
      const paused = await this.options.repo.setState(id, undefined, 'paused', undefined);
      if (paused) this.options.logger?.warn({ scheduleId: id }, 'schedule paused: its chat refused the answer for good');
    } catch (error) {
      this.options.logger?.warn({ scheduleId: id, err: describeError(error) }, 'could not pause a schedule whose chat refused its answer');
    }
  }

  /** Ends a schedule for good; its thread stays, with what it did. */
  cancel(ownerUserId: string | undefined, id: string): Promise<ScheduleChange> {
    return this.change(ownerUserId, id, async () => ({ state: 'cancelled', nextRunAt: undefined }));
  }

  private async change(
    ownerUserId: string | undefined,
    id: string,
    decide: (schedule: ScheduleRecord) => Promise<{ state: ScheduleRecord['state']; nextRunAt: Date | undefined }>,
  ): Promise<ScheduleChange> {
    const current = await this.options.repo.get(id.toLowerCase());
    if (current === undefined || (ownerUserId !== undefined && current.ownerUserId !== ownerUserId)) return { ok: false, reason: 'not_found' };
    const { state, nextRunAt } = await decide(current);
    const changed = await this.options.repo.setState(current.id, ownerUserId, state, nextRunAt);
    if (changed === undefined) return { ok: false, reason: 'not_found' };
    if (state === 'active') this.options.onChange?.();
    return { ok: true, schedule: changed };
  }
}

function newScheduleId(): string {
  let id = '';
  for (let i = 0; i < ID_LENGTH; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}
