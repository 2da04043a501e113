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
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { eq } from 'drizzle-orm';
import { JournaledIntake } from '../../src/channel/journaled-intake.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/index.js';
import { SchedulesRepo } from '../../src/db/repos/schedules-repo.js';
import { SqlTurnJournal } from '../../src/db/repos/turn-journal-repo.js';
import { inboundDedupe } from '../../src/db/schema/index.js';
import { silentLogger } from '../../src/logger.js';
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
  const model = new FakeOpenAI();
  // `Echo: <last user text>`, noting when each text was first asked.
  const askedAt = new Map<string, number>();
  model.respond = (request) => {
    const text = lastUserText(request.messages);
    if (!askedAt.has(text)) askedAt.set(text, Date.now());
    return echoResponder(request);
  };
  let database: Awaited<ReturnType<typeof createBenchDatabase>> | undefined;
  let server: ChildProcess | undefined;
  try {
    await Promise.all([telegram.start(), model.start()]);
    database = target.url === undefined ? undefined : await createBenchDatabase(target.url);
    const configPath = writeChatBenchConfig({
      model,
      databaseUrl: database?.url,
      // Memory extraction runs 30 s after a conversation's last message: off, so one phase's never lands in the other's.
      extraConfig: 'schedules: { min_interval_seconds: 1, timezone: UTC }\nmemory: { enabled: false }',
      channel: `telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }`,
    });
    let apiUrl: string | undefined;
    server = await startProcess(
      [SERVER_BUNDLE, '--config', configPath],
      (line) => {
        if (line.includes('"server listening"')) apiUrl = (JSON.parse(line) as { url: string }).url;
        return line.includes('"channel started"');
      },
      { runsCompiled: true },
    );
    if (apiUrl === undefined) throw new Error('schedules bench: the server did not log its URL');

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
