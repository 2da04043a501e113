import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JournaledIntake } from '../../../src/channel/journaled-intake.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { SchedulesRepo } from '../../../src/db/repos/schedules-repo.js';
import { schedules as schedulesTable } from '../../../src/db/schema/index.js';
import { SqlTurnJournal } from '../../../src/db/repos/turn-journal-repo.js';
import { silentLogger } from '../../../src/logger.js';
import { Scheduler } from '../../../src/schedules/scheduler.js';
import type { MissedPolicy, ScheduleOrigin } from '../../../src/schedules/types.js';
import { nextRunAfter, type ScheduleSpec } from '../../../src/schedules/when.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/**
 * The scheduler on a real database, with the clock in the test's hands: every occurrence is
 * handed to the intake once, by one of several processes, across a crash between its two steps,
 * and the `missed` policy decides what a late start does (issue #17).
 */

const T0 = Date.parse('2026-12-04T10:00:00.000Z');
const ORIGIN: ScheduleOrigin = { channel: 'telegram', chatId: '42', userId: '42', workspaceId: '42', isPrivateChat: true };
const EVERY_2S: ScheduleSpec = { kind: 'every', seconds: 2, anchor: new Date(T0).toISOString(), timezone: 'UTC' };

describe.each(testDatabaseKinds())('the scheduler on %s', (kind) => {
  let database: DatabaseHandle;
  let repo: SchedulesRepo;
  let clock: number;
  const schedulers: Scheduler[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    repo = new SchedulesRepo(database.db);
  });
  afterAll(async () => {
    await Promise.all(schedulers.map((scheduler) => scheduler.stop()));
    await database?.close();
  });
  beforeEach(() => {
    clock = T0;
  });
  // A test's processes end with it: one left looking would fire the next test's schedules.
  afterEach(async () => {
    await Promise.all(schedulers.splice(0).map((scheduler) => scheduler.stop()));
  });

  /** One process: its own intake behind the shared journal, as a server has. */
  function process(): { scheduler: Scheduler; intake: RecordingIntake } {
    const intake = new RecordingIntake();
    const journaled = new JournaledIntake({ intake, journal: new SqlTurnJournal(database.db), logger: silentLogger() });
    // A poll far beyond the test: only the test's looks fire anything.
    const scheduler = new Scheduler({ repo, intake: journaled, logger: silentLogger(), now: () => clock, pollMs: 3_600_000 });
    scheduler.start();
    schedulers.push(scheduler);
    return { scheduler, intake };
  }

  async function schedule(spec: ScheduleSpec, missed: MissedPolicy = 'run_once'): Promise<string> {
    const id = randomUUID().replaceAll('-', '').slice(0, 16);
    const inserted = await repo.insert({
      id,
      ownerUserId: 'u-1',
      origin: { ...ORIGIN, chatId: `chat-${id}` },
      threadId: randomUUID(),
      task: `task of ${id}`,
      spec,
      missed,
      nextRunAt: nextRunAfter(spec, new Date(clock)),
    });
    expect(inserted).toBe(true);
    return id;
  }

  function firedFor(id: string, ...intakes: RecordingIntake[]) {
    return intakes.flatMap((intake) => intake.committed).filter((message) => message.scheduled?.scheduleId === id);
  }

  it('fires a schedule due every 2 s for 20 s ten times, never twice, with two processes looking at once', async () => {
    const a = process();
    const b = process();
    const id = await schedule(EVERY_2S);
    for (let step = 1; step <= 10; step++) {
      clock = T0 + step * 2000;
      await Promise.all([a.scheduler.lookNow(), b.scheduler.lookNow()]);
    }
    // Across both processes, in the order they fell due.
    const fired = firedFor(id, a.intake, b.intake).sort((x, y) => x.receivedAt - y.receivedAt);
    expect(fired.map((message) => message.messageId)).toEqual(Array.from({ length: 10 }, (_, i) => `schedule:${id}:${T0 + (i + 1) * 2000}`));
    // Each occurrence is the task, answered as a new message in the schedule's chat, on its own thread.
    expect(fired[0]).toMatchObject({ text: `task of ${id}`, kind: 'chat', chatId: `chat-${id}`, replyTo: {}, scheduled: { scheduleId: id } });
    expect((await repo.get(id))?.nextRunAt?.getTime()).toBe(T0 + 22_000);
  });

  it('runs once at start for occurrences missed while no process ran (run_once), and none with skip', async () => {
    const { scheduler, intake } = process();
    const runOnce = await schedule(EVERY_2S, 'run_once');
    const skip = await schedule(EVERY_2S, 'skip');
    // Down across three occurrences and more than a minute late for the first.
    clock = T0 + 66_500;
    await scheduler.lookNow();
    expect(firedFor(runOnce, intake).map((m) => m.messageId)).toEqual([`schedule:${runOnce}:${T0 + 2000}`]);
    expect(firedFor(skip, intake)).toEqual([]);
    // Both go on from the first occurrence after now, not the missed ones.
    expect((await repo.get(runOnce))?.nextRunAt?.getTime()).toBe(T0 + 68_000);
    expect((await repo.get(skip))?.nextRunAt?.getTime()).toBe(T0 + 68_000);
  });

  it('fires an occurrence once when a crash came between handing it over and moving the schedule on', async () => {
    const id = await schedule(EVERY_2S);
    const first = process();
    const realAdvance = repo.advance.bind(repo);
    // The process dies right after the journal took the occurrence.
    repo.advance = async () => {
      throw new Error('killed');
    };
    clock = T0 + 2000;
    await first.scheduler.lookNow();
    repo.advance = realAdvance;
    await first.scheduler.stop();
    expect(firedFor(id, first.intake)).toHaveLength(1);
    const restarted = process();
    await restarted.scheduler.lookNow();
    expect(firedFor(id, restarted.intake)).toEqual([]);
    expect((await repo.get(id))?.nextRunAt?.getTime()).toBe(T0 + 4000);
  });

  it('keeps an occurrence due while the intake is full, and fires it once there is room', async () => {
    const { scheduler, intake } = process();
    const id = await schedule(EVERY_2S);
    intake.isFull = true;
    clock = T0 + 2000;
    await scheduler.lookNow();
    expect((await repo.get(id))?.nextRunAt?.getTime()).toBe(T0 + 2000);
    intake.isFull = false;
    await scheduler.lookNow();
    expect(firedFor(id, intake).map((m) => m.messageId)).toEqual([`schedule:${id}:${T0 + 2000}`]);
  });

  it('fires a one-off once and marks it done; paused and cancelled schedules never fire', async () => {
    const { scheduler, intake } = process();
    const once = await schedule({ kind: 'once', at: new Date(T0 + 5000).toISOString(), timezone: 'UTC' });
    const paused = await schedule(EVERY_2S);
    const cancelled = await schedule(EVERY_2S);
    await repo.setState(paused, 'u-1', 'paused', undefined);
    await repo.setState(cancelled, undefined, 'cancelled', undefined);
    for (const at of [T0 + 5000, T0 + 7000, T0 + 9000]) {
      clock = at;
      await scheduler.lookNow();
    }
    expect(firedFor(once, intake)).toHaveLength(1);
    expect(await repo.get(once)).toMatchObject({ state: 'done', nextRunAt: undefined });
    expect(firedFor(paused, intake)).toEqual([]);
    expect(firedFor(cancelled, intake)).toEqual([]);
  });

  it('pauses a schedule it cannot read, and fires the ones due with it', async () => {
    const { scheduler, intake } = process();
    const broken = await schedule(EVERY_2S);
    const good = await schedule(EVERY_2S);
    // A spec this build cannot read (stored by another version, or by hand).
    await database.db.update(schedulesTable).set({ spec: { kind: 'cron', expression: 'every blue moon', timezone: 'UTC' } }).where(eq(schedulesTable.id, broken));
    clock = T0 + 2000;
    await scheduler.lookNow();
    expect(firedFor(good, intake)).toHaveLength(1);
    expect(firedFor(broken, intake)).toEqual([]);
    expect((await repo.get(broken))?.state).toBe('paused');
  });

  it('fires a burst of 250 due at once, each once, across batches of the one look', async () => {
    const { scheduler, intake } = process();
    const ids = await Promise.all(Array.from({ length: 250 }, () => schedule(EVERY_2S)));
    clock = T0 + 2000;
    await scheduler.lookNow();
    const fired = new Set(intake.committed.map((message) => message.scheduled?.scheduleId));
    expect(ids.filter((id) => fired.has(id))).toHaveLength(250);
    expect(intake.committed.filter((message) => ids.includes(message.scheduled?.scheduleId as string))).toHaveLength(250);
  });

  it("changes a schedule only for its owner, and for the operator", async () => {
    const id = await schedule(EVERY_2S);
    expect(await repo.setState(id, 'someone-else', 'cancelled', undefined)).toBeUndefined();
    expect((await repo.get(id))?.state).toBe('active');
    expect(await repo.setState(id, 'u-1', 'paused', undefined)).toMatchObject({ state: 'paused' });
    expect(await repo.setState(id, undefined, 'cancelled', undefined)).toMatchObject({ state: 'cancelled' });
    // Cancelled is final.
    expect(await repo.setState(id, undefined, 'active', new Date(clock))).toBeUndefined();
  });
});
