/**
 * Scheduled work (issue #17), two parts, each next to a baseline measured in the same run, on
 * PGlite and, with `--database-url`, on PostgreSQL too:
 *
 * 1. The scheduler's overhead per due run: 200 schedules due at one instant, one `Scheduler` whose
 *    clock stands at that instant, `lookNow()` until all 200 are committed into a counting intake
 *    behind a `JournaledIntake` (over `SqlTurnJournal`) and moved on. Baseline: the same 200
 *    occurrence messages (`occurrenceOf`) committed straight into a `JournaledIntake` over the same
 *    database, one after another, no scheduler. Wall and CPU ms per due run, median of 3 rounds.
 * 2. A 200-result burst through the whole server (the bundle, as `npm start` runs it; Telegram on
 *    the fake Bot API, the fake model echoing): 200 private chats each make `/schedule in 10s
 *    report <i>`, and the time runs from the first due time until every chat shows its post.
 *    Baseline: the same 200 chats each send one ordinary message at once, until all are answered.
 * 3. Opt-in (`--group-burst`, PostgreSQL only, 10+ minutes): 200 one-offs due in the same second,
 *    all answering into one Telegram group whose fake keeps Telegram's 20 messages a minute (429
 *    past it), inserted straight into the running server's database. Timed from the due instant
 *    until all 200 results show in the group; every result must arrive once, with no 429 the
 *    server caused and no dead letter. Baseline: the group's own floor, 200 messages at 20 a
 *    minute (9 minutes after the first minute's 20).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { JournaledIntake } from '../../src/channel/journaled-intake.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/index.js';
import { SchedulesRepo } from '../../src/db/repos/schedules-repo.js';
import { SqlTurnJournal } from '../../src/db/repos/turn-journal-repo.js';
import { inboundDedupe } from '../../src/db/schema/index.js';
import { silentLogger } from '../../src/logger.js';
import { safeUserId } from '../../src/manager/user-id.js';
import { occurrenceOf, Scheduler } from '../../src/schedules/scheduler.js';
import type { ScheduleOrigin, ScheduleRecord } from '../../src/schedules/types.js';
import type { ScheduleSpec } from '../../src/schedules/when.js';
import { echoResponder, FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { type ChatMessageView, FakeTelegram } from '../fakes/telegram/index.js';
import { RecordingIntake } from '../helpers/recording-intake.js';
import { createBenchDatabase, ownCpuMs, PostgresCpuMeter } from './cpu-time.js';
import { SERVER_BUNDLE, startProcess, stopProcess, writeChatBenchConfig } from './server-process.js';
import { type LatencySummary, percentile, summarize } from './stats.js';

export interface SchedulesBenchOptions {
  /** PostgreSQL server URL: both parts run there too (each on a throwaway database); absent → PGlite only. */
  databaseUrl?: string | undefined;
  /** Part 3 too: 200 results into one Telegram group at its 20 a minute (needs `databaseUrl`; 10+ minutes). */
  groupBurst?: boolean | undefined;
}

/** Schedules due at once, in both parts. */
const DUE = 200;
/** Part 1: rounds, each on fresh schedules; medians are reported. */
const ROUNDS = 3;
/** Part 1: schedules (and baseline messages) of the warm-up round, not reported. */
const WARM_UP = 20;
/** Part 1: the instant the warm-up's schedules are due; each round's is an hour earlier than the one before, so moved-on schedules (T + 60 s) of earlier rounds are never due again. */
const T0 = Date.parse('2026-12-04T10:00:00.000Z');
const EVERY_SECONDS = 60;
/** Part 2: `/schedule` commands sent at once, each batch waiting for its confirmations. */
const COMMAND_BATCH = 50;
/** Part 2: the one-offs' delay; creating all 200 must take less than this. */
const IN_SECONDS = 10;
/** Part 2: how long to wait after the last result for a second post in any chat. */
const SETTLE_MS = 1500;
const FIRST_CHAT = 4_000_000;
const WARM_UP_CHAT = 4_900_000;

interface Target {
  name: 'PGlite' | 'PostgreSQL';
  /** PostgreSQL server URL; absent → PGlite. */
  url?: string;
}

export async function runSchedulesBench(options: SchedulesBenchOptions): Promise<void> {
  const targets: Target[] = [{ name: 'PGlite' }, ...(options.databaseUrl ? [{ name: 'PostgreSQL' as const, url: options.databaseUrl }] : [])];
  console.log(
    `\nschedules, part 1: scheduler overhead per due run. ${DUE} schedules (every ${EVERY_SECONDS} s) due at one instant, one Scheduler with its clock there, lookNow() until all are committed into a counting intake behind a JournaledIntake (SqlTurnJournal) and moved on; median of ${ROUNDS} rounds on fresh schedules after a warm-up of ${WARM_UP}`,
  );
  console.log(`baseline: the same ${DUE} occurrence messages (occurrenceOf) committed straight into a JournaledIntake over the same database, one after another, no scheduler`);
  const overheads: OverheadFigures[] = [];
  for (const target of targets) overheads.push(await schedulerOverhead(target));
  printOverheads(overheads);

  console.log(
    `\nschedules, part 2: a ${DUE}-result burst through the server (its bundle, as npm start runs it; Telegram on the fake Bot API, fake model echoing). ${DUE} private chats each make /schedule in ${IN_SECONDS}s report <i>; timed from the first due time until every chat shows its post`,
  );
  console.log(`baseline: the same ${DUE} chats each send one ordinary message at once; timed until all ${DUE} are answered`);
  const bursts: BurstFigures[] = [];
  for (const target of targets) bursts.push(await burst(target));
  printBursts(bursts);

  if (!options.groupBurst) {
    console.log(`\nschedules, part 3 (${DUE} results into one Telegram group at its ${GROUP_PER_MINUTE} a minute, 10+ minutes): not run; add --group-burst --database-url postgres://…`);
    return;
  }
  console.log(
    `\nschedules, part 3: ${DUE} one-offs due in the same second, all answering into one Telegram group (the fake Bot API keeping its ${GROUP_PER_MINUTE} messages a minute, 429 past it), inserted straight into the running server's PostgreSQL database; timed from the due instant until all ${DUE} results show in the group`,
  );
  if (options.databaseUrl === undefined) {
    console.log('part 3 skipped: it needs PostgreSQL (--database-url postgres://…), to insert the schedules into the database of the server while it runs');
    return;
  }
  console.log(
    `baseline: the group's own floor, ${DUE} messages at ${GROUP_PER_MINUTE} a minute: ${GROUP_PER_MINUTE} at once, the other ${DUE - GROUP_PER_MINUTE} over ${(GROUP_FLOOR_MS / 60_000).toFixed(0)} minutes`,
  );
  printGroupBurst(await groupBurst(options.databaseUrl));
}

// ---------------------------------------------------------------------------------------------
// Part 1: the scheduler on a database, against the journal alone.

interface RunFigures {
  wallMs: number;
  cpuMs: number;
  /** PostgreSQL backends' CPU (undefined on PGlite, where the database runs in this process). */
  pgCpuMs: number | undefined;
}

interface OverheadFigures {
  target: Target['name'];
  baseline: RunFigures;
  scheduler: RunFigures;
  looks: number;
}

const ORIGIN: ScheduleOrigin = { channel: 'telegram', chatId: 'bench', userId: 'u-bench', workspaceId: 'bench', isPrivateChat: true };

/** The `count` schedules of one round (or the baseline's records), due at `dueAt`, ids `<prefix>x<i>`. */
function schedulesDueAt(prefix: string, count: number, dueAt: number): ScheduleRecord[] {
  const spec: ScheduleSpec = { kind: 'every', seconds: EVERY_SECONDS, anchor: new Date(dueAt - EVERY_SECONDS * 1000).toISOString(), timezone: 'UTC' };
  return Array.from({ length: count }, (_, i) => {
    const id = `${prefix}x${i}`;
    return {
      id,
      ownerUserId: 'u-bench',
      origin: { ...ORIGIN, chatId: `chat-${id}` },
      threadId: randomUUID(),
      task: `report ${i}`,
      spec,
      missed: 'run_once',
      state: 'active',
      nextRunAt: new Date(dueAt),
      lastRunAt: undefined,
      createdAt: new Date(dueAt - EVERY_SECONDS * 1000),
    };
  });
}

async function schedulerOverhead(target: Target): Promise<OverheadFigures> {
  const server = target.url === undefined ? undefined : await createBenchDatabase(target.url);
  const dataDir = server === undefined ? mkdtempSync(join(tmpdir(), 'dfc-bench-schedules-')) : undefined;
  let database: DatabaseHandle | undefined;
  try {
    database = await openDatabase(server === undefined ? { dataDir } : { url: server.url });
    const repo = new SchedulesRepo(database.db);
    // One journal for the whole run, as a server has one: its prepared statements are made once.
    const journal = new SqlTurnJournal(database.db);
    const meter = async <T>(work: () => Promise<T>): Promise<{ figures: RunFigures; result: T }> => {
      const pg = server === undefined ? undefined : new PostgresCpuMeter(server.url, server.name);
      await pg?.start();
      const cpuBefore = ownCpuMs();
      const startedAt = performance.now();
      const result = await work();
      const wallMs = performance.now() - startedAt;
      const cpuMs = ownCpuMs() - cpuBefore;
      const pgCpuMs = await pg?.stop();
      return { figures: { wallMs, cpuMs, pgCpuMs }, result };
    };

    const baselineRun = async (prefix: string, count: number, dueAt: number): Promise<RunFigures> => {
      const intake = new RecordingIntake();
      const journaled = new JournaledIntake({ intake, journal, logger: silentLogger() });
      const records = schedulesDueAt(prefix, count, dueAt);
      const { figures } = await meter(async () => {
        for (const record of records) {
          const reservation = await journaled.reserve();
          await reservation.commit(occurrenceOf(record, new Date(dueAt), dueAt));
        }
      });
      if (intake.committed.length !== count) throw new Error(`schedules bench: the baseline committed ${intake.committed.length} of ${count}`);
      return figures;
    };

    const schedulerRun = async (prefix: string, count: number, dueAt: number): Promise<{ figures: RunFigures; looks: number }> => {
      const intake = new RecordingIntake();
      const journaled = new JournaledIntake({ intake, journal, logger: silentLogger() });
      // A poll far beyond the run: only the bench's looks fire anything.
      const scheduler = new Scheduler({ repo, intake: journaled, logger: silentLogger(), now: () => dueAt, pollMs: 3_600_000 });
      scheduler.start();
      try {
        // The start's look, and one more, before anything is due.
        await scheduler.lookNow();
        const records = schedulesDueAt(prefix, count, dueAt);
        for (const record of records) {
          if (!(await repo.insert(record))) throw new Error(`schedules bench: schedule ${record.id} exists already`);
        }
        const { figures, result: looks } = await meter(async () => {
          let looks = 0;
          do {
            await scheduler.lookNow();
            looks++;
          } while (intake.committed.length < count && looks <= count);
          return looks;
        });
        // Before checking: a full batch leaves a look due at once, which stop() cancels.
        await scheduler.stop();
        await checkFired(repo, intake, records, dueAt);
        return { figures, looks };
      } finally {
        await scheduler.stop();
      }
    };

    // Warm-up: JIT, prepared statements, the journal's first purge, the pool's connections.
    await baselineRun('bw', WARM_UP, T0);
    await schedulerRun('sw', WARM_UP, T0);
    const baselines: RunFigures[] = [];
    const schedulers: RunFigures[] = [];
    let looks = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const dueAt = T0 - (round + 1) * 3_600_000;
      // Alternating which goes first, so drift in the machine's load falls on both.
      if (round % 2 === 1) baselines.push(await baselineRun(`b${round}`, DUE, dueAt));
      const run = await schedulerRun(`s${round}`, DUE, dueAt);
      schedulers.push(run.figures);
      looks = run.looks;
      if (round % 2 === 0) baselines.push(await baselineRun(`b${round}`, DUE, dueAt));
    }
    return { target: target.name, baseline: medianRun(baselines), scheduler: medianRun(schedulers), looks };
  } finally {
    await database?.close();
    await server?.drop();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Throws unless exactly one occurrence of each schedule was committed and each moved to `dueAt` + 60 s. */
async function checkFired(repo: SchedulesRepo, intake: RecordingIntake, records: readonly ScheduleRecord[], dueAt: number): Promise<void> {
  const expected = new Set(records.map((record) => `schedule:${record.id}:${dueAt}`));
  const committed = intake.committed.map((message) => message.messageId ?? '');
  const unexpected = committed.filter((id) => !expected.has(id));
  if (committed.length !== records.length || new Set(committed).size !== records.length || unexpected.length > 0) {
    throw new Error(
      `schedules bench: ${committed.length} occurrences committed (${new Set(committed).size} distinct, ${unexpected.length} unexpected), expected exactly ${records.length}`,
    );
  }
  const next = dueAt + EVERY_SECONDS * 1000;
  if ((await repo.due(new Date(dueAt), 1000)).length > 0) throw new Error('schedules bench: schedules still due after the scheduler ran');
  // Earlier rounds' schedules are due an hour and more later: only this round's are due by `next`.
  const moved = await repo.due(new Date(next), 1000);
  const ids = new Set(records.map((record) => record.id));
  const wrong = moved.filter((schedule) => !ids.has(schedule.id) || schedule.nextRunAt?.getTime() !== next || schedule.lastRunAt?.getTime() !== dueAt);
  if (moved.length !== records.length || wrong.length > 0) {
    throw new Error(`schedules bench: ${moved.length} of ${records.length} schedules moved to ${new Date(next).toISOString()}, ${wrong.length} wrong`);
  }
}

function medianRun(runs: readonly RunFigures[]): RunFigures {
  const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);
  const pg = runs.map((run) => run.pgCpuMs);
  return {
    wallMs: median(runs.map((run) => run.wallMs)),
    cpuMs: median(runs.map((run) => run.cpuMs)),
    pgCpuMs: pg.every((ms) => ms !== undefined) ? median(pg as number[]) : undefined,
  };
}

function printOverheads(rows: readonly OverheadFigures[]): void {
  const perRun = (ms: number | undefined) => (ms === undefined ? '—' : (ms / DUE).toFixed(3));
  const cells = (values: string[]) => values.map((value) => value.padStart(12)).join(' ');
  console.log(`${'database'.padEnd(11)} ${'run'.padEnd(28)} ${cells(['wall ms/run', 'CPU ms/run', '+PG ms/run', 'total wall ms'])}`);
  for (const row of rows) {
    const line = (name: string, run: RunFigures) =>
      console.log(`${row.target.padEnd(11)} ${name.padEnd(28)} ${cells([perRun(run.wallMs), perRun(run.cpuMs), perRun(run.pgCpuMs), run.wallMs.toFixed(0)])}`);
    line('baseline (journal only)', row.baseline);
    line(`scheduler (${row.looks} look${row.looks === 1 ? '' : 's'})`, row.scheduler);
    const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? '—' : `${(a / b).toFixed(2)}×`);
    const { scheduler: s, baseline: b } = row;
    console.log(
      `${row.target.padEnd(11)} ${'ratio scheduler / baseline'.padEnd(28)} ${cells([ratio(s.wallMs, b.wallMs), ratio(s.cpuMs, b.cpuMs), ratio(s.pgCpuMs, b.pgCpuMs), ''])}`,
    );
    console.log(
      `${row.target.padEnd(11)} ${'scheduler minus baseline'.padEnd(28)} ${cells([perRun(s.wallMs - b.wallMs), perRun(s.cpuMs - b.cpuMs), s.pgCpuMs === undefined || b.pgCpuMs === undefined ? '—' : perRun(s.pgCpuMs - b.pgCpuMs), ''])}`,
    );
  }
  console.log(`checked every round: exactly ${DUE} occurrences committed, each once, and every schedule moved to T + ${EVERY_SECONDS} s`);
}

// ---------------------------------------------------------------------------------------------
// Part 2: the burst through the server.

interface BurstFigures {
  target: Target['name'];
  /** Confirmations of the 200 commands: from the first sent to the last on screen. */
  createMs: number;
  /** First to last due time of the 200 schedules. */
  dueSpreadMs: number;
  /** First due time to the last post on screen. */
  scheduledLastMs: number;
  /** Each post: its own due time to its final text on screen. */
  scheduled: LatencySummary;
  /** Ordinary messages sent at once to the last answer on screen. */
  baselineLastMs: number;
  baseline: LatencySummary;
  /** The part of each before the model was asked: due (or sent) → the model request's arrival. */
  scheduledToModel: LatencySummary;
  baselineToModel: LatencySummary;
  /** Due (or sent) → the turn journal took it (its `first_seen`): the scheduler's hand-over, Telegram's ingress. */
  scheduledToJournal: LatencySummary;
  baselineToJournal: LatencySummary;
  /** First due time to the journal taking the last occurrence. */
  lastJournaledMs: number;
  violations: number;
  tooManyRequests: number;
  failedCalls: number;
  once: number;
}

/** When `text` was first on screen in message `m` (its send, or the edit that showed it). */
function shownAt(m: ChatMessageView, text: string): number | undefined {
  const index = m.history.indexOf(text);
  if (index < 0) return undefined;
  return index === 0 ? m.sentAt : m.editedAt[index - 1];
}

/** The scheduled posts in a chat: bot messages that reply to nothing. */
function postsIn(telegram: FakeTelegram, chatId: number): ChatMessageView[] {
  return telegram.botMessages(chatId).filter((m) => m.replyTo === undefined);
}

/** Resolves once `isDone(chat)` holds for every chat, checking each only until it did. */
function waitForEvery(telegram: FakeTelegram, chats: readonly number[], isDone: (chatId: number) => boolean, timeoutMs: number): Promise<unknown> {
  const waiting = new Set(chats);
  return telegram.waitFor(() => {
    for (const chatId of waiting) if (isDone(chatId)) waiting.delete(chatId);
    return waiting.size === 0;
  }, timeoutMs);
}

async function burst(target: Target): Promise<BurstFigures> {
  const telegram = new FakeTelegram();
  const { model, askedAt } = echoingModel();
  let database: Awaited<ReturnType<typeof createBenchDatabase>> | undefined;
  let server: ChildProcess | undefined;
  try {
    await Promise.all([telegram.start(), model.start()]);
    database = target.url === undefined ? undefined : await createBenchDatabase(target.url);
    let apiUrl: string;
    let configPath: string;
    ({ server, apiUrl, configPath } = await startScheduleServer(telegram, model, database?.url));

    // Warm-up: ordinary turns and a short schedule each, not measured.
    const warmChats = Array.from({ length: 5 }, (_, i) => WARM_UP_CHAT + i);
    for (const chatId of warmChats) telegram.sendUserMessage({ chatId, chatType: 'private', text: `warm ${chatId}` });
    await waitForEvery(telegram, warmChats, (chatId) => telegram.botMessages(chatId).some((m) => m.text === `Echo: warm ${chatId}`), 60_000);
    await makeSchedules(telegram, warmChats, (chatId) => `/schedule in 1s warm task ${chatId}`);
    await waitForEvery(telegram, warmChats, (chatId) => postsIn(telegram, chatId).some((m) => m.text === `Echo: warm task ${chatId}`), 60_000);

    // The burst: 200 one-offs due within about the time it takes to make them.
    const chats = Array.from({ length: DUE }, (_, i) => FIRST_CHAT + i);
    const task = (chatId: number) => `report ${chatId - FIRST_CHAT}`;
    const createStartedAt = Date.now();
    const confirmedAt = await makeSchedules(telegram, chats, (chatId) => `/schedule in ${IN_SECONDS}s ${task(chatId)}`);
    const createMs = confirmedAt - createStartedAt;
    const dueAt = await dueTimes(apiUrl, chats);
    const firstDue = Math.min(...dueAt.values());
    const lastDue = Math.max(...dueAt.values());
    const post = (chatId: number) => `Echo: ${task(chatId)}`;
    await waitForEvery(telegram, chats, (chatId) => postsIn(telegram, chatId).some((m) => m.text === post(chatId)), 180_000);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const scheduledShown: number[] = [];
    const perResult: number[] = [];
    const wrong: string[] = [];
    for (const chatId of chats) {
      const posts = postsIn(telegram, chatId);
      const results = posts.filter((m) => m.history.includes(post(chatId)));
      if (posts.length !== 1 || results.length !== 1) {
        wrong.push(`${chatId}: ${results.length} results, ${posts.length} posts (${posts.map((m) => JSON.stringify(m.text.slice(0, 60))).join(', ')})`);
        continue;
      }
      const at = shownAt(results[0] as ChatMessageView, post(chatId)) as number;
      scheduledShown.push(at);
      perResult.push(at - (dueAt.get(chatId) as number));
    }
    if (wrong.length > 0) throw new Error(`schedules bench: ${wrong.length} chats did not get exactly one post:\n  ${wrong.slice(0, 10).join('\n  ')}`);
    const scheduledLastMs = Math.max(...scheduledShown) - firstDue;
    const scheduledToModel = chats.map((chatId) => (askedAt.get(task(chatId)) ?? Number.NaN) - (dueAt.get(chatId) as number));

    // Baseline: the same chats, one ordinary message each, all at once.
    const sentAt = new Map<number, number>();
    const sentIds = new Map<number, number>();
    const baselineStartedAt = Date.now();
    for (const chatId of chats) {
      sentAt.set(chatId, Date.now());
      sentIds.set(chatId, telegram.sendUserMessage({ chatId, chatType: 'private', text: `now ${chatId}` }).message_id);
    }
    const answer = (chatId: number) => telegram.botMessages(chatId).find((m) => m.history.includes(`Echo: now ${chatId}`));
    await waitForEvery(telegram, chats, (chatId) => answer(chatId) !== undefined, 180_000);
    const answered = chats.map((chatId) => shownAt(answer(chatId) as ChatMessageView, `Echo: now ${chatId}`) as number);
    const baselineLastMs = Math.max(...answered) - baselineStartedAt;
    const baselineLatencies = chats.map((chatId, i) => (answered[i] as number) - (sentAt.get(chatId) as number));
    const baselineToModel = chats.map((chatId) => (askedAt.get(`now ${chatId}`) ?? Number.NaN) - (sentAt.get(chatId) as number));

    const violations = telegram.rateLimitViolations.length;
    const failed = telegram.calls.filter((call) => call.response?.ok === false);
    const tooManyRequests = failed.filter((call) => call.response?.ok === false && call.response.errorCode === 429).length;
    if (violations > 0) throw new Error(`schedules bench: ${violations} sends or edits ignored a running retry_after (rateLimitViolations)`);

    // When the journal took each: read once the server is gone (PGlite's files are its alone while it runs).
    await stopProcess(server);
    server = undefined;
    const journaledAt = await journalTimes(database === undefined ? { dataDir: join(dirname(configPath), 'data') } : { url: database.url });
    const journaled = (key: string) => journaledAt.get(key) ?? Number.NaN;
    const scheduledToJournal = chats.map((chatId) => journaled(`${chatId}/schedule:`) - (dueAt.get(chatId) as number));
    const baselineToJournal = chats.map((chatId) => journaled(`${chatId}/${sentIds.get(chatId)}`) - (sentAt.get(chatId) as number));
    const lastJournaledMs = Math.max(...chats.map((chatId) => journaled(`${chatId}/schedule:`))) - firstDue;
    return {
      target: target.name,
      createMs,
      dueSpreadMs: lastDue - firstDue,
      scheduledLastMs,
      scheduled: summarize(perResult, scheduledLastMs),
      baselineLastMs,
      baseline: summarize(baselineLatencies, baselineLastMs),
      scheduledToModel: summarize(scheduledToModel, scheduledLastMs),
      baselineToModel: summarize(baselineToModel, baselineLastMs),
      scheduledToJournal: summarize(scheduledToJournal, scheduledLastMs),
      baselineToJournal: summarize(baselineToJournal, baselineLastMs),
      lastJournaledMs,
      violations,
      tooManyRequests,
      failedCalls: failed.length,
      once: scheduledShown.length,
    };
  } finally {
    if (server !== undefined) await stopProcess(server);
    await Promise.all([telegram.stop(), model.stop()]);
    await database?.drop();
  }
}

/**
 * Sends `command(chat)` from each chat, `COMMAND_BATCH` at a time, each batch waiting for its
 * confirmations; throws on a reply that is not one. Resolves with when the last confirmation arrived.
 */
async function makeSchedules(telegram: FakeTelegram, chats: readonly number[], command: (chatId: number) => string): Promise<number> {
  let lastAt = 0;
  for (let first = 0; first < chats.length; first += COMMAND_BATCH) {
    const batch = chats.slice(first, first + COMMAND_BATCH);
    const sent = new Map(batch.map((chatId) => [chatId, telegram.sendUserMessage({ chatId, chatType: 'private', text: command(chatId) }).message_id]));
    const replyIn = (chatId: number) => telegram.botMessages(chatId).find((m) => m.replyTo === sent.get(chatId));
    await waitForEvery(
      telegram,
      batch,
      (chatId) => {
        const reply = replyIn(chatId);
        if (reply !== undefined && !reply.text.startsWith('Scheduled ')) throw new Error(`schedules bench: /schedule in chat ${chatId} was answered ${JSON.stringify(reply.text)}`);
        return reply !== undefined;
      },
      60_000,
    );
    for (const chatId of batch) lastAt = Math.max(lastAt, (replyIn(chatId) as ChatMessageView).sentAt);
  }
  return lastAt;
}

/**
 * When the turn journal took each message (`first_seen`), keyed `<chat>/<message id>`, and
 * `<chat>/schedule:` for a chat's scheduled occurrence (each bench chat has one).
 */
async function journalTimes(database: { url: string } | { dataDir: string }): Promise<Map<string, number>> {
  const handle = await openDatabase(database);
  try {
    const rows = await handle.db
      .select({ chatId: inboundDedupe.chatId, messageId: inboundDedupe.messageId, firstSeen: inboundDedupe.firstSeen })
      .from(inboundDedupe)
      .where(eq(inboundDedupe.channel, 'telegram'));
    const times = new Map<string, number>();
    for (const row of rows) times.set(`${row.chatId}/${row.messageId.startsWith('schedule:') ? 'schedule:' : row.messageId}`, row.firstSeen.getTime());
    return times;
  } finally {
    await handle.close();
  }
}

/** Each chat's schedule's due time, from the API (open: the bench server has no keys); throws when one is missing (fired already). */
async function dueTimes(apiUrl: string, chats: readonly number[]): Promise<Map<number, number>> {
  const response = await fetch(`${apiUrl}/api/schedules?limit=1000`);
  if (!response.ok) throw new Error(`schedules bench: GET /api/schedules answered ${response.status}`);
  const { schedules } = (await response.json()) as { schedules: { chat_id: string; next_run_at: string | null }[] };
  const dueAt = new Map<number, number>();
  for (const schedule of schedules) if (schedule.next_run_at !== null) dueAt.set(Number(schedule.chat_id), Date.parse(schedule.next_run_at));
  const missing = chats.filter((chatId) => !dueAt.has(chatId));
  if (missing.length > 0) {
    throw new Error(`schedules bench: ${missing.length} schedules were no longer pending when read (making them took longer than ${IN_SECONDS} s?)`);
  }
  return new Map(chats.map((chatId) => [chatId, dueAt.get(chatId) as number]));
}

function printBursts(rows: readonly BurstFigures[]): void {
  console.log(`${''.padEnd(40)} ${'last ms'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p95 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
  for (const row of rows) {
    console.log(
      `${row.target}: ${DUE} × /schedule confirmed in ${row.createMs} ms (${COMMAND_BATCH} at a time); due times spread over ${row.dueSpreadMs} ms, first to last`,
    );
    const line = (name: string, lastMs: number, summary: LatencySummary) =>
      console.log(`${name.padEnd(40)} ${[lastMs, summary.p50Ms, summary.p95Ms, summary.p99Ms].map((ms) => ms.toFixed(0).padStart(9)).join(' ')}`);
    line(`  ${DUE} scheduled results (due → post)`, row.scheduledLastMs, row.scheduled);
    line(`  ${DUE} ordinary messages (sent → answer)`, row.baselineLastMs, row.baseline);
    const ratio = (a: number, b: number) => (a / b).toFixed(2).padStart(9);
    console.log(
      `${'  ratio scheduled / ordinary'.padEnd(40)} ${ratio(row.scheduledLastMs, row.baselineLastMs)} ${ratio(row.scheduled.p50Ms, row.baseline.p50Ms)} ${ratio(row.scheduled.p95Ms, row.baseline.p95Ms)} ${ratio(row.scheduled.p99Ms, row.baseline.p99Ms)}`,
    );
    const toModel = (name: string, summary: LatencySummary) =>
      console.log(`${name.padEnd(40)} ${''.padStart(9)} ${[summary.p50Ms, summary.p95Ms, summary.p99Ms].map((ms) => ms.toFixed(0).padStart(9)).join(' ')}`);
    console.log(`${'    first due → last journaled'.padEnd(40)} ${row.lastJournaledMs.toFixed(0).padStart(9)}  (the scheduler handed ${DUE} over at ${((DUE / row.lastJournaledMs) * 1000).toFixed(0)}/s)`);
    toModel('    due → journaled (scheduler hand-over)', row.scheduledToJournal);
    toModel('    due → model asked', row.scheduledToModel);
    toModel('    sent → journaled (Telegram ingress)', row.baselineToJournal);
    toModel('    sent → model asked', row.baselineToModel);
    console.log(
      `  every result once: ${row.once}/${DUE} chats with exactly one post; rate-limit violations ${row.violations}; 429s received ${row.tooManyRequests}; failed Bot API calls ${row.failedCalls}`,
    );
  }
  console.log("last ms: scheduled, from the first due time to the last post on screen; ordinary, from sending all to the last answer on screen. p50–p99: each result's own due (or send) time to its final text");
}

// ---------------------------------------------------------------------------------------------
// Part 3 (opt-in): 200 results into one Telegram group, at the group's 20 a minute.

/** Part 3: the supergroup every schedule answers into (group ids are negative). */
const GROUP_CHAT = -1001234567890;
/** Part 3: Telegram's "20 messages per minute to the same group", as the fake enforces it. */
const GROUP_PER_MINUTE = 20;
const GROUP_WINDOW_MS = 60_000;
/** Part 3: what the budget allows at best: the first minute's 20 at once, then 20 a minute. */
const GROUP_FLOOR_MS = ((DUE - GROUP_PER_MINUTE) / GROUP_PER_MINUTE) * GROUP_WINDOW_MS;
/** The methods the fake counts against a group's budget (its `GROUP_LIMITED_METHODS`). */
const GROUP_COUNTED_METHODS = new Set(['sendMessage', 'editMessageText', 'sendPhoto', 'sendDocument']);
/** Part 3: how far ahead of the inserts the 200 one-offs fall due: past the scheduler's 15 s poll, which never hears of rows written behind its back. */
const GROUP_DUE_AHEAD_MS = 25_000;
/** Part 3: inserting must end this long before the due instant, or the bench fails (the look at due time might miss some). */
const GROUP_INSERT_MARGIN_MS = 3_000;
/** Part 3: the wait for all 200 results; the budget alone needs 9 minutes. */
const GROUP_RESULTS_TIMEOUT_MS = 20 * 60_000;
/** Part 3: outbox entries live this long before they become dead letters (the default 900 s is shorter than the burst). */
const GROUP_OUTBOX_DEADLINE_SECONDS = 1800;
/** Part 3: after the last result, how long to wait for a second copy of any. */
const GROUP_SETTLE_MS = 10_000;
/** Part 3: the senders of the 200 schedules (user ids in the group, one each). */
const GROUP_FIRST_USER = 7_000_000;
/** Part 3: what the bench says in the group so the fake knows it: a command for another bot, which the server ignores (`decideMessage`: `other-bot`). */
const GROUP_HELLO = '/help@other_bot';
/** Part 3: requests to the server's API at once, and how long each may take. */
const API_BATCH = 20;
const API_TIMEOUT_MS = 30_000;
/** Part 3: how long the server may take to stop before it is killed. */
const STOP_TIMEOUT_MS = 30_000;

interface GroupBurstFigures {
  /** 200 `POST /api/threads`, API_BATCH at a time. */
  threadsMs: number;
  /** 200 `SchedulesRepo.insert`. */
  insertMs: number;
  /** From the end of the inserts to the due instant. */
  aheadMs: number;
  /** Due instant → the first and the last result on screen. */
  firstMs: number;
  lastMs: number;
  /** Results per minute, first to last on screen. */
  perMinute: number;
  /** Results first on screen in each minute after the due instant. */
  byMinute: number[];
  /** Each result: the due instant → its text on screen. */
  results: LatencySummary;
  /** The due instant → the model asked for the last of the 200 tasks. */
  lastAskedMs: number;
  /** Successful sends and edits to the group, the places of its budget taken. */
  places: number;
  /** Results whose message first showed a partial and was then edited to the result. */
  editedResults: number;
  /** Of those, how long the partial stood in the group before the result replaced it (ms). */
  partialStood: { p50Ms: number; maxMs: number };
  /** For each place after the first minute's: how long after a place freed the next send came (ms). */
  freedPlaceWait: { p50Ms: number; maxMs: number };
  /** Results on screen exactly once, and bot messages in the group that are no result. */
  once: number;
  otherMessages: string[];
  /** 429s `groupLimit` answered (the server sent past the group's budget). */
  groupFloods: number;
  violations: number;
  failedCalls: number;
  outbox: { pending: number; dead: number } | undefined;
  /** The server's warnings and errors while the part ran, by message. */
  warnings: Map<string, number>;
}

/** Part 3: `npm run bench -- --only schedules --group-burst --database-url postgres://…`. */
async function groupBurst(url: string): Promise<GroupBurstFigures> {
  const telegram = new FakeTelegram({ groupLimit: { perWindow: GROUP_PER_MINUTE, windowMs: GROUP_WINDOW_MS } });
  const { model, askedAt } = echoingModel();
  let database: Awaited<ReturnType<typeof createBenchDatabase>> | undefined;
  let handle: DatabaseHandle | undefined;
  let server: ChildProcess | undefined;
  try {
    await Promise.all([telegram.start(), model.start()]);
    database = await createBenchDatabase(url);
    let apiUrl: string;
    ({ server, apiUrl } = await startScheduleServer(telegram, model, database.url, [`outbox_deadline_seconds: ${GROUP_OUTBOX_DEADLINE_SECONDS}`]));
    const warnings = tallyWarnings(server);

    // Warm-up in a private chat (outside the group's budget): one ordinary turn.
    telegram.sendUserMessage({ chatId: WARM_UP_CHAT, chatType: 'private', text: 'warm group burst' });
    await telegram.waitFor(() => telegram.botMessages(WARM_UP_CHAT).some((m) => m.text === 'Echo: warm group burst'), 60_000);

    // The fake learns the group from a message in it; the server must not answer it (it would take a place of the budget).
    telegram.sendUserMessage({ chatId: GROUP_CHAT, chatType: 'supergroup', text: GROUP_HELLO });
    await telegram.waitFor(() => telegram.unconfirmedUpdates() === 0, 30_000);
    await sleep(2000);
    const toGroup = () => telegram.calls.filter((call) => Number(call.params.chat_id) === GROUP_CHAT);
    if (toGroup().length > 0) {
      throw new Error(`schedules bench: the server answered ${JSON.stringify(GROUP_HELLO)} in the group (${toGroup().map((call) => call.method).join(', ')}); the counts assume it ignores it`);
    }

    // Each schedule its own thread, made as ScheduleBook.create makes it.
    const users = Array.from({ length: DUE }, (_, i) => String(GROUP_FIRST_USER + i));
    const owners = users.map(safeUserId);
    const threadsStartedAt = performance.now();
    const threads = await inBatches(DUE, API_BATCH, (i) => createThread(apiUrl as string, owners[i] as string));
    const threadsMs = performance.now() - threadsStartedAt;

    // The 200 rows, straight into the server's database: all due at one whole second.
    handle = await openDatabase({ url: database.url, maxConnections: 4 });
    const repo = new SchedulesRepo(handle.db);
    const dueAt = Math.ceil((Date.now() + GROUP_DUE_AHEAD_MS) / 1000) * 1000;
    const spec: ScheduleSpec = { kind: 'once', at: new Date(dueAt).toISOString(), timezone: 'UTC' };
    const insertStartedAt = performance.now();
    await inBatches(DUE, API_BATCH, async (i) => {
      const origin: ScheduleOrigin = { channel: 'telegram', chatId: String(GROUP_CHAT), userId: users[i] as string, workspaceId: String(GROUP_CHAT), isPrivateChat: false };
      const schedule = { id: `gb${i}`, ownerUserId: owners[i] as string, origin, threadId: threads[i] as string, task: `report ${i}`, spec, missed: 'run_once' as const, nextRunAt: new Date(dueAt) };
      if (!(await repo.insert(schedule))) throw new Error(`schedules bench: schedule ${schedule.id} exists already`);
    });
    const insertMs = performance.now() - insertStartedAt;
    const aheadMs = dueAt - Date.now();
    await handle.close();
    handle = undefined;
    if (aheadMs < GROUP_INSERT_MARGIN_MS) throw new Error(`schedules bench: the schedules were inserted only ${aheadMs} ms before they fell due`);

    // Until every result shows in the group.
    const post = (i: number) => `Echo: report ${i}`;
    const resultIndex = new Map(Array.from({ length: DUE }, (_, i) => [post(i), i]));
    const waiting = new Set(resultIndex.values());
    const posts = () => telegram.botMessages(GROUP_CHAT).filter((m) => m.replyTo === undefined);
    try {
      await telegram.waitFor(() => {
        for (const m of posts()) for (const text of m.history) waiting.delete(resultIndex.get(text) ?? -1);
        return waiting.size === 0;
      }, GROUP_RESULTS_TIMEOUT_MS);
    } catch (error) {
      const outbox = await outboxCounts(apiUrl).catch(() => undefined);
      throw new Error(
        `schedules bench: ${DUE - waiting.size} of ${DUE} results showed in the group within ${GROUP_RESULTS_TIMEOUT_MS / 60_000} min of the due instant (${Math.round((Date.now() - dueAt) / 1000)} s ago); 429s caused ${telegram.groupFloods.length}; outbox ${JSON.stringify(outbox)}; first missing: ${[...waiting].slice(0, 10).join(', ')}`,
        { cause: error },
      );
    }
    await sleep(GROUP_SETTLE_MS);

    // Each result exactly once, and nothing else in the group.
    const shown: number[] = [];
    const wrong: string[] = [];
    const partialStood: number[] = [];
    const finalPosts = posts();
    for (let i = 0; i < DUE; i++) {
      const showing = finalPosts.filter((m) => m.history.includes(post(i)));
      const only = showing[0];
      if (showing.length !== 1 || only === undefined || only.text !== post(i)) {
        wrong.push(`report ${i}: ${showing.length} messages showed it (${showing.map((m) => JSON.stringify(m.text)).join(', ')})`);
        continue;
      }
      const at = shownAt(only, post(i)) as number;
      shown.push(at);
      if (only.history.length > 1) partialStood.push(at - only.sentAt);
    }
    if (wrong.length > 0) throw new Error(`schedules bench: ${wrong.length} results did not show exactly once in the group:\n  ${wrong.slice(0, 10).join('\n  ')}`);
    const otherMessages = telegram
      .botMessages(GROUP_CHAT)
      .filter((m) => m.replyTo !== undefined || !resultIndex.has(m.text))
      .map((m) => m.text);

    const first = Math.min(...shown);
    const last = Math.max(...shown);
    const byMinute = Array.from({ length: Math.floor((last - dueAt) / 60_000) + 1 }, () => 0);
    for (const at of shown) {
      const minute = Math.floor((at - dueAt) / 60_000);
      byMinute[minute] = (byMinute[minute] ?? 0) + 1;
    }
    // The places of the budget taken, and how long each freed place stayed unused.
    const places = telegram.calls
      .filter((call) => Number(call.params.chat_id) === GROUP_CHAT && GROUP_COUNTED_METHODS.has(call.method) && call.response?.ok === true)
      .map((call) => call.at)
      .sort((a, b) => a - b);
    const freedWaits = places.slice(GROUP_PER_MINUTE).map((at, j) => at - ((places[j] as number) + GROUP_WINDOW_MS));
    const sortedWaits = [...freedWaits].sort((a, b) => a - b);
    const outbox = await outboxCounts(apiUrl);
    const figures: GroupBurstFigures = {
      threadsMs,
      insertMs,
      aheadMs,
      firstMs: first - dueAt,
      lastMs: last - dueAt,
      perMinute: last > first ? ((DUE - 1) / (last - first)) * 60_000 : Number.NaN,
      byMinute,
      results: summarize(
        shown.map((at) => at - dueAt),
        last - dueAt,
      ),
      lastAskedMs: Math.max(...Array.from({ length: DUE }, (_, i) => (askedAt.get(`report ${i}`) ?? Number.NaN) - dueAt)),
      places: places.length,
      editedResults: partialStood.length,
      partialStood: { p50Ms: percentile([...partialStood].sort((a, b) => a - b), 50), maxMs: Math.max(...partialStood) },
      freedPlaceWait: { p50Ms: percentile(sortedWaits, 50), maxMs: sortedWaits.at(-1) ?? Number.NaN },
      once: shown.length,
      otherMessages,
      groupFloods: telegram.groupFloods.length,
      violations: telegram.rateLimitViolations.length,
      failedCalls: telegram.calls.filter((call) => call.response?.ok === false).length,
      outbox,
      warnings,
    };
    await stopWithin(server, STOP_TIMEOUT_MS);
    server = undefined;
    return figures;
  } finally {
    if (server !== undefined) await stopWithin(server, STOP_TIMEOUT_MS);
    await handle?.close().catch(() => undefined);
    await Promise.all([telegram.stop(), model.stop()]);
    await database?.drop();
  }
}

/** Runs `work(0 … count − 1)`, `batch` at a time; resolves with the results in order. */
async function inBatches<T>(count: number, batch: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let first = 0; first < count; first += batch) {
    const indexes = Array.from({ length: Math.min(batch, count - first) }, (_, k) => first + k);
    results.push(...(await Promise.all(indexes.map(work))));
  }
  return results;
}

/** A thread for one schedule, as `ScheduleBook.create` makes it (open: the bench server has no keys); resolves with its id. */
async function createThread(apiUrl: string, ownerUserId: string): Promise<string> {
  const response = await fetch(`${apiUrl}/api/threads`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ metadata: { owner_user_id: ownerUserId, schedule_source: { provider: 'telegram', chat_id: String(GROUP_CHAT) } } }),
    signal: AbortSignal.timeout(API_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`schedules bench: POST /api/threads answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { thread_id: string }).thread_id;
}

/** The server's outbox, from `GET /health` (which answers 503 when something is unwell, with the same body). */
async function outboxCounts(apiUrl: string): Promise<{ pending: number; dead: number } | undefined> {
  const response = await fetch(`${apiUrl}/health`, { signal: AbortSignal.timeout(API_TIMEOUT_MS) });
  return ((await response.json()) as { outbox?: { pending: number; dead: number } }).outbox;
}

/** Counts the server's warnings and errors (its JSON log lines on stdout) by message, from now on. */
function tallyWarnings(child: ChildProcess): Map<string, number> {
  const counts = new Map<string, number>();
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      let entry: { level?: unknown; msg?: unknown };
      try {
        entry = JSON.parse(line) as { level?: unknown; msg?: unknown };
      } catch {
        continue;
      }
      if (typeof entry.level !== 'number' || entry.level < 40) continue;
      const key = `${entry.level >= 50 ? 'error' : 'warn'}: ${String(entry.msg)}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  });
  return counts;
}

/** `stopProcess`, killing the process when it has not exited within `timeoutMs`. */
async function stopWithin(child: ChildProcess, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([stopProcess(child), timedOut]);
  clearTimeout(timer);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

function printGroupBurst(row: GroupBurstFigures): void {
  const minutes = (ms: number) => (ms / 60_000).toFixed(2);
  console.log(
    `PostgreSQL: ${DUE} threads made in ${row.threadsMs.toFixed(0)} ms (POST /api/threads, ${API_BATCH} at a time), ${DUE} schedules inserted in ${row.insertMs.toFixed(0)} ms, ${(row.aheadMs / 1000).toFixed(1)} s before they fell due`,
  );
  console.log(`${''.padEnd(44)} ${'ms'.padStart(9)} ${'min'.padStart(7)}`);
  const line = (name: string, ms: number) => console.log(`${name.padEnd(44)} ${ms.toFixed(0).padStart(9)} ${minutes(ms).padStart(7)}`);
  line('  due → first result in the group', row.firstMs);
  line(`  due → last (${DUE}th) result in the group`, row.lastMs);
  line(`  floor: ${DUE} at ${GROUP_PER_MINUTE}/min (baseline)`, GROUP_FLOOR_MS);
  console.log(`${'  ratio measured / floor'.padEnd(44)} ${(row.lastMs / GROUP_FLOOR_MS).toFixed(2).padStart(9)}`);
  console.log(`  rate, first to last result: ${row.perMinute.toFixed(1)} results a minute (the group allows ${GROUP_PER_MINUTE})`);
  console.log(`  results in each minute after the due instant: ${row.byMinute.join(' ')}`);
  console.log(
    `  each result, due → on screen: p50 ${row.results.p50Ms.toFixed(0)} ms, p95 ${row.results.p95Ms.toFixed(0)} ms, p99 ${row.results.p99Ms.toFixed(0)} ms; the model was asked for the last task ${row.lastAskedMs.toFixed(0)} ms after the due instant`,
  );
  console.log(
    `  the group's budget: ${row.places} sends and edits taken (${DUE} results, ${row.places - DUE} places beyond one per result); a freed place waited p50 ${row.freedPlaceWait.p50Ms.toFixed(0)} ms, at most ${row.freedPlaceWait.maxMs.toFixed(0)} ms, for the next send`,
  );
  console.log(
    `  results shown by editing a partial posted first: ${row.editedResults}${row.editedResults > 0 ? `; the partial stood in the group p50 ${row.partialStood.p50Ms.toFixed(0)} ms, at most ${row.partialStood.maxMs.toFixed(0)} ms, before its result replaced it` : ''}`,
  );
  console.log(
    `  every result once: ${row.once}/${DUE}; other bot messages in the group ${row.otherMessages.length}${row.otherMessages.length > 0 ? ` (${row.otherMessages.slice(0, 5).map((text) => JSON.stringify(text.slice(0, 40))).join(', ')})` : ''}`,
  );
  console.log(
    `  429s the server caused (groupFloods) ${row.groupFloods}; rate-limit violations ${row.violations}; failed Bot API calls ${row.failedCalls}; outbox at the end: ${row.outbox === undefined ? 'not reported' : `pending ${row.outbox.pending}, dead ${row.outbox.dead}`}`,
  );
  const warnings = [...row.warnings].sort((a, b) => b[1] - a[1]);
  console.log(`  the server's warnings and errors: ${warnings.length === 0 ? 'none' : warnings.map(([msg, n]) => `${msg} ×${n}`).join('; ')}`);
  const failures = [
    ...(row.groupFloods > 0 ? [`${row.groupFloods} 429s from the group's budget`] : []),
    ...(row.violations > 0 ? [`${row.violations} sends or edits inside a retry_after`] : []),
    ...(row.outbox === undefined ? ['no outbox in /health'] : row.outbox.dead > 0 ? [`${row.outbox.dead} dead letters`] : []),
  ];
  if (failures.length > 0) throw new Error(`schedules bench, part 3: ${failures.join('; ')}`);
}

/** The server as `npm start` runs it, with Telegram on `telegram` and schedules allowed every second; resolves once Telegram runs. */
async function startScheduleServer(
  telegram: FakeTelegram,
  model: FakeOpenAI,
  databaseUrl: string | undefined,
  channelSettings: string[] = [],
): Promise<{ server: ChildProcess; apiUrl: string; configPath: string }> {
  const configPath = writeChatBenchConfig({
    model,
    databaseUrl,
    // Memory extraction runs 30 s after a conversation's last message: off, so one phase's never lands in the other's.
    extraConfig: 'schedules: { min_interval_seconds: 1, timezone: UTC }\nmemory: { enabled: false }',
    ...(channelSettings.length === 0 ? {} : { channelSettings }),
    channel: `telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }`,
  });
  let apiUrl: string | undefined;
  const server = await startProcess(
    [SERVER_BUNDLE, '--config', configPath],
    (line) => {
      if (line.includes('"server listening"')) apiUrl = (JSON.parse(line) as { url: string }).url;
      return line.includes('"channel started"');
    },
    { runsCompiled: true },
  );
  if (apiUrl === undefined) throw new Error('schedules bench: the server did not log its URL');
  return { server, apiUrl, configPath };
}

/** The fake model answering `Echo: <last user text>`, noting when each text was first asked. */
function echoingModel(): { model: FakeOpenAI; askedAt: Map<string, number> } {
  const model = new FakeOpenAI();
  const askedAt = new Map<string, number>();
  model.respond = (request) => {
    const text = lastUserText(request.messages);
    if (!askedAt.has(text)) askedAt.set(text, Date.now());
    return echoResponder(request);
  };
  return { model, askedAt };
}
