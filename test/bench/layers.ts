/**
 * CPU per message, layer by layer (issue #14): the same fake model and load through
 *   L0 a bare `ChatOpenAI` streaming call,
 *   L1 the runtime's LangGraph graph with LangGraph's in-memory saver,
 *   L2 that graph with our `DrizzleCheckpointSaver`,
 *   L2+ that, with what every message owes besides the graph (the turn journal, the run's record,
 *       Telegram's placeholder and final edit: `withTurnDuties` in layer-worker.ts), beside the stack,
 *   L3 our embedded runtime (`streamRun` as the manager calls it),
 *   L4 the whole server behind the fake Telegram Bot API,
 * L2–L4 on PGlite and, when a PostgreSQL URL is given, on PostgreSQL. L0–L3 each run in a fresh
 * process (`layer-worker.ts`); L4 is the server as `npm start` runs it. CPU ms per message is the
 * working process's CPU time over the "all chats at once" phase ÷ messages. Then one long
 * conversation per layer: turn 1 against turn N. With `rounds` > 1 the whole ladder runs again
 * that many times, one layer after another, and each figure is the median of its rounds: on a
 * machine whose speed drifts between runs, a single ladder's ratios move by ±0.2.
 */

import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SERVER_V8_FLAGS } from '../../src/v8-flags.js';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { createBenchDatabase, PostgresCpuMeter, processCpuMs } from './cpu-time.js';
import { answerTo, FinalWatcher } from './final-watcher.js';
import type { LayerName, LayerResult, LayerSpec } from './layer-worker.js';
import { ROOT, startBenchServer, startProcess, stopProcess } from './server-process.js';
import { statementsPerMessage } from './statement-counts.js';
import { summarize } from './stats.js';
import { drive } from './telegram.js';

export interface LayersBenchOptions {
  chats: number;
  messagesPerChat: number;
  /** PostgreSQL server URL; absent → PGlite only. Each layer gets a fresh database on it. */
  databaseUrl?: string | undefined;
  /** Turns of the long conversation; 0 = skip it. */
  longTurns: number;
  /** Times the ladder runs, L0 to L4 each time; figures are the medians (default 1). */
  rounds?: number;
  /** When set: `<dir>/<layer>.cpuprofile` per layer, of its measured phase ("all chats at once") only; see profile-breakdown.ts. */
  cpuProfileDir?: string | undefined;
}

type DatabaseKind = 'PGlite' | 'PostgreSQL';

interface Measured {
  name: string;
  /** The row this one's ratios are to. */
  below?: string;
  result: LayerResult;
}

/** `channels.max_concurrency`'s default: the manager's workers. */
const CONCURRENCY = 5;
/** Turns averaged at each end of the long conversation. */
const LONG_WINDOW = 5;

export async function runLayersBench(options: LayersBenchOptions): Promise<void> {
  const total = options.chats * options.messagesPerChat;
  console.log(
    `\nCPU per message, layer by layer: ${options.chats} chats × ${options.messagesPerChat} messages (${total}), ${CONCURRENCY} at a time, fake model streaming ~200 characters in ~4-character deltas with zero delay`,
  );
  const model = new FakeOpenAI();
  await model.start();
  model.respond = (request) => ({ text: answerTo(lastUserText(request.messages)) });
  const kinds: DatabaseKind[] = options.databaseUrl ? ['PGlite', 'PostgreSQL'] : ['PGlite'];
  const base = { modelBaseUrl: model.baseURL, chats: options.chats, messagesPerChat: options.messagesPerChat, concurrency: CONCURRENCY, longTurns: options.longTurns };

  const fileName = (name: string) => name.replace(/[^A-Za-z0-9]+/g, '-');
  const profileDir = options.cpuProfileDir === undefined ? undefined : resolve(options.cpuProfileDir);
  if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true });
  const profilePath = (name: string) => (profileDir === undefined ? undefined : join(profileDir, `${fileName(name)}.cpuprofile`));
  const runWorker = (spec: LayerSpec, name: string) => {
    const cpuProfilePath = profilePath(name);
    // The server's V8 flags weigh on the floors too: the ratios are then our code's, not V8's settings'.
    return runLayerWorker(cpuProfilePath === undefined ? spec : { ...spec, cpuProfilePath }, [...SERVER_V8_FLAGS]);
  };

  const rounds = Math.max(1, options.rounds ?? 1);
  const perRound: Measured[][] = [];
  for (let round = 1; round <= rounds; round++) {
    if (rounds > 1) console.log(`round ${round} of ${rounds}`);
    // The long conversation once, in the last round.
    const spec = { ...base, longTurns: round === rounds ? base.longTurns : 0 };
    const rows: Measured[] = [];
    rows.push({ name: 'L0 bare ChatOpenAI', result: await runWorker({ ...spec, layer: 'model' }, 'L0 bare ChatOpenAI') });
    rows.push({ name: 'L1 graph, MemorySaver', below: 'L0 bare ChatOpenAI', result: await runWorker({ ...spec, layer: 'graph-memory' }, 'L1 graph, MemorySaver') });
    for (const kind of kinds) {
      const saver = `L2 graph + saver, ${kind}`;
      const runtime = `L3 runtime, ${kind}`;
      const layers: [layer: LayerName | 'server', name: string, below: string][] = [
        ['graph-saver', saver, 'L1 graph, MemorySaver'],
        ['graph-duties', `L2+ saver + duties, ${kind}`, saver],
        ['runtime', runtime, saver],
        ['server', `L4 server, ${kind}`, runtime],
      ];
      for (const [layer, name, below] of layers) {
        const result = await onDatabase(kind, options.databaseUrl, (database) => {
          if (layer === 'server') return measureServer(model, spec, database, profilePath(name));
          const layerSpec = { ...spec, layer, database: database ?? { kind: 'pglite' as const } };
          return layer === 'graph-duties' ? withFakeTelegram((telegram) => runWorker({ ...layerSpec, telegram }, name)) : runWorker(layerSpec, name);
        });
        rows.push({ name, below, result });
      }
    }
    perRound.push(rows);
  }
  const rows = medianRows(perRound);
  await model.stop();
  printTable(rows);
  if (rounds > 1) printRounds(perRound);
  printStatements(rows);
  printGoals(rows, kinds, perRound);
  if (options.longTurns > 0) printLong(rows, options.longTurns);
}

/** Runs `measure` with a fake Bot API holding one chat a person wrote in, stopped afterwards. */
async function withFakeTelegram<T>(measure: (telegram: NonNullable<LayerSpec['telegram']>) => Promise<T>): Promise<T> {
  const telegram = new FakeTelegram();
  await telegram.start();
  try {
    const chatId = 1;
    telegram.sendUserMessage({ chatId, chatType: 'private', text: 'hello' });
    return await measure({ apiRoot: telegram.apiRoot, token: telegram.token, chatId });
  } finally {
    await telegram.stop();
  }
}

/** Runs `measure` on PGlite, or on a fresh PostgreSQL database that is dropped afterwards. */
async function onDatabase(
  kind: DatabaseKind,
  serverUrl: string | undefined,
  measure: (database: { kind: 'postgres'; url: string; name: string } | undefined) => Promise<LayerResult>,
): Promise<LayerResult> {
  if (kind === 'PGlite' || serverUrl === undefined) return measure(undefined);
  const database = await createBenchDatabase(serverUrl);
  try {
    return await measure({ kind: 'postgres', url: database.url, name: database.name });
  } finally {
    await database.drop();
  }
}

export async function runLayerWorker(spec: LayerSpec, nodeArgs: string[]): Promise<LayerResult> {
  let line = '';
  const worker = await startProcess([...nodeArgs, join(ROOT, 'test/bench/layer-worker.ts'), JSON.stringify(spec)], (output) => {
    if (!output.startsWith('result ')) return false;
    line = output.slice('result '.length);
    return true;
  });
  await stopProcess(worker);
  return JSON.parse(line) as LayerResult;
}

/**
 * L4: the server process, CPU from /proc; the same phases as a worker, driven as Telegram users.
 * With `cpuProfilePath`, a profile of the measured phase alone is written there (phase-profiler.ts).
 */
async function measureServer(
  model: FakeOpenAI,
  spec: Omit<LayerSpec, 'layer'>,
  database: { url: string; name: string } | undefined,
  cpuProfilePath: string | undefined,
): Promise<LayerResult> {
  const telegram = new FakeTelegram();
  await telegram.start();
  // On PGlite the server counts its statements, and when asked it profiles the measured phase:
  // preloads that a SIGUSR2 at each end of the phase reads; the server itself knows nothing of them.
  const counting = database === undefined;
  const preloads = [...(counting ? ['pglite-statements.ts'] : []), ...(cpuProfilePath === undefined ? [] : ['phase-profiler.ts'])];
  const server = await startBenchServer({
    telegram,
    model,
    databaseUrl: database?.url,
    nodeArgs: preloads.flatMap((file) => ['--import', join(ROOT, 'test/bench', file)]),
    ...(cpuProfilePath === undefined ? {} : { environment: { DFC_BENCH_CPU_PROFILE: cpuProfilePath } }),
  });
  const pid = server.pid as number;
  const phaseEdge = (edge: 'start' | 'end') =>
    preloads.length === 0 ? Promise.resolve(undefined) : signalPhaseEdge(server, edge, { counting, profiling: cpuProfilePath !== undefined });
  try {
    await drive(telegram, Math.min(spec.chats, 5), 2, 1_000_000);
    const aloneLatenciesMs = await latenciesInARow(telegram, 500_000, spec.messagesPerChat);
    const postgresMeter = database ? new PostgresCpuMeter(database.url, database.name) : undefined;
    await postgresMeter?.start();
    const statementsBefore = await phaseEdge('start');
    const cpuBefore = await processCpuMs(pid);
    const callsBefore = telegram.calls.length;
    const concurrent = await drive(telegram, spec.chats, spec.messagesPerChat, 1);
    const total = spec.chats * spec.messagesPerChat;
    const result: LayerResult = {
      cpuMsPerMessage: ((await processCpuMs(pid)) - cpuBefore) / total,
      aloneLatenciesMs: aloneLatenciesMs.map((turn) => turn.latencyMs),
      concurrentPerSecond: concurrent.perSecond,
      platformCallsPerMessage: callsPerMessage(telegram.calls.slice(callsBefore), total),
    };
    const statementsAfter = await phaseEdge('end');
    if (statementsBefore !== undefined && statementsAfter !== undefined) {
      result.statementsPerMessage = statementsPerMessage(statementsBefore, statementsAfter, total);
      result.queriesPerMessage = Object.values(result.statementsPerMessage).reduce((sum, n) => sum + n, 0);
    }
    const postgresCpuMs = await postgresMeter?.stop();
    if (postgresCpuMs !== undefined) result.postgresCpuMsPerMessage = postgresCpuMs / total;
    if (spec.longTurns > 0) {
      const turns = await latenciesInARow(telegram, 3_000_000, spec.longTurns, pid);
      result.long = { cpuMs: turns.map((turn) => turn.cpuMs), latencyMs: turns.map((turn) => turn.latencyMs) };
    }
    return result;
  } finally {
    await stopProcess(server);
    await telegram.stop();
  }
}

/**
 * One end of the measured phase, told to the server's preloads with SIGUSR2. Resolves with the
 * PGlite statement counts so far when `counting` (pglite-statements.ts prints them), and, at the
 * phase's end when `profiling`, once the phase profiler has written its profile.
 */
function signalPhaseEdge(server: ChildProcess, edge: 'start' | 'end', { counting, profiling }: { counting: boolean; profiling: boolean }): Promise<Record<string, number> | undefined> {
  const statementsPrefix = 'pglite-statements ';
  let statements: Record<string, number> | undefined;
  let awaitsStatements = counting;
  let awaitsProfile = profiling && edge === 'end';
  if (!awaitsStatements && !awaitsProfile) {
    server.kill('SIGUSR2');
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith(statementsPrefix)) {
          statements = JSON.parse(line.slice(statementsPrefix.length)) as Record<string, number>;
          awaitsStatements = false;
        } else if (line === 'phase-profiler written') {
          awaitsProfile = false;
        }
      }
      if (awaitsStatements || awaitsProfile) return;
      server.stdout?.off('data', onData);
      resolve(statements);
    };
    server.stdout?.on('data', onData);
    server.kill('SIGUSR2');
  });
}

/** One chat's messages in a row; with `pid`, the server's CPU per turn too (10 ms resolution). */
async function latenciesInARow(telegram: FakeTelegram, chatId: number, count: number, pid?: number): Promise<{ latencyMs: number; cpuMs: number }[]> {
  const watcher = new FinalWatcher(telegram);
  const turns: { latencyMs: number; cpuMs: number }[] = [];
  for (let m = 0; m < count; m++) {
    const text = `q ${chatId}-${m}`;
    const cpuAt = pid === undefined ? 0 : await processCpuMs(pid);
    const final = watcher.expect(answerTo(text), Date.now());
    telegram.sendUserMessage({ chatId, chatType: 'private', text });
    const latencyMs = await final;
    turns.push({ latencyMs, cpuMs: pid === undefined ? 0 : (await processCpuMs(pid)) - cpuAt });
  }
  return turns;
}

/**
 * One row per layer from several rounds: the median CPU per message, throughput and PostgreSQL
 * CPU; the latencies of every round together; statements from the first round (they are counts,
 * the same each round) and the long conversation from the last, the only round that has one.
 */
function medianRows(perRound: Measured[][]): Measured[] {
  return (perRound[0] as Measured[]).map((first, i) => {
    const results = perRound.map((rows) => (rows[i] as Measured).result);
    const postgres = results.flatMap((result) => (result.postgresCpuMsPerMessage === undefined ? [] : [result.postgresCpuMsPerMessage]));
    const long = results.at(-1)?.long;
    const result: LayerResult = {
      ...first.result,
      cpuMsPerMessage: median(results.map((r) => r.cpuMsPerMessage)),
      concurrentPerSecond: median(results.map((r) => r.concurrentPerSecond)),
      aloneLatenciesMs: results.flatMap((r) => r.aloneLatenciesMs),
      ...(postgres.length > 0 ? { postgresCpuMsPerMessage: median(postgres) } : {}),
    };
    if (long) result.long = long;
    else delete result.long;
    return { ...first, result };
  });
}

/** Each round's CPU per message, so the spread behind the medians shows. */
function printRounds(perRound: Measured[][]): void {
  console.log('\nCPU ms/msg in each round');
  for (const [i, row] of (perRound[0] as Measured[]).entries()) {
    console.log(`  ${row.name.padEnd(26)}${perRound.map((rows) => ((rows[i] as Measured).result.cpuMsPerMessage.toFixed(1)).padStart(8)).join('')}`);
  }
}

/** The middle value; of an even count, the mean of the two in the middle. */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function p50(latencies: number[]): number {
  return summarize(latencies, 1).p50Ms;
}

function printTable(rows: Measured[]): void {
  const byName = new Map(rows.map((row) => [row.name, row]));
  const cell = (value: string) => value.padStart(10);
  console.log(`\n${'layer'.padEnd(28)}${cell('CPU ms/msg')}${cell('ratio')}${cell('+PG ms')}${cell('queries')}${cell('msgs/s')}${cell('alone p50')}${cell('ratio')}`);
  for (const row of rows) {
    const below = row.below === undefined ? undefined : byName.get(row.below);
    const cpu = row.result.cpuMsPerMessage;
    const alone = p50(row.result.aloneLatenciesMs);
    const cpuRatio = below ? `${(cpu / below.result.cpuMsPerMessage).toFixed(2)}×` : '';
    const aloneRatio = below ? `${(alone / p50(below.result.aloneLatenciesMs)).toFixed(2)}×` : '';
    const postgres = row.result.postgresCpuMsPerMessage === undefined ? '' : row.result.postgresCpuMsPerMessage.toFixed(1);
    const queries = row.result.queriesPerMessage === undefined ? '' : row.result.queriesPerMessage.toFixed(1);
    console.log(
      `${row.name.padEnd(28)}${cell(cpu.toFixed(1))}${cell(cpuRatio)}${cell(postgres)}${cell(queries)}${cell(row.result.concurrentPerSecond.toFixed(1))}${cell(alone.toFixed(1))}${cell(aloneRatio)}`,
    );
  }
  console.log(
    '(ratios are to the row below it in the stack: L2 to L1, L2+ and L3 to L2 on the same database, L4 to L3, ...; +PG = CPU in PostgreSQL backends; queries = statements per message, PGlite workers)',
  );
}

/** Bot API calls by method, per message: what a message costs in platform round trips. */
function callsPerMessage(calls: readonly { method: string }[], messages: number): Record<string, number> {
  const perMessage: Record<string, number> = {};
  for (const { method } of calls) perMessage[method] = (perMessage[method] ?? 0) + 1 / messages;
  return perMessage;
}

/**
 * Each PGlite layer's statements per message by text, and the server's Bot API calls by method,
 * most frequent first: what a message costs in round trips.
 */
function printStatements(rows: Measured[]): void {
  const print = (title: string, counts: Record<string, number>) => {
    console.log(`\n${title}`);
    for (const [text, n] of Object.entries(counts).sort(([, a], [, b]) => b - a)) {
      if (n >= 0.05) console.log(`  ${n.toFixed(2).padStart(6)}  ${text.length > 150 ? `${text.slice(0, 147)}...` : text}`);
    }
  };
  for (const row of rows) {
    const { statementsPerMessage: statements, platformCallsPerMessage: calls } = row.result;
    if (statements !== undefined) print(`statements per message, ${row.name}`, statements);
    if (calls !== undefined) print(`Telegram Bot API calls per message, ${row.name}`, calls);
  }
}

function printGoals(rows: Measured[], kinds: DatabaseKind[], perRound: Measured[][]): void {
  const finder = (from: Measured[]) => (name: string) => from.find((row) => row.name === name)?.result as LayerResult;
  const goals = (find: (name: string) => LayerResult, kind: DatabaseKind) => {
    const saver = find(`L2 graph + saver, ${kind}`);
    const duties = find(`L2+ saver + duties, ${kind}`);
    const server = find(`L4 server, ${kind}`);
    return [
      server.cpuMsPerMessage / saver.cpuMsPerMessage,
      saver.cpuMsPerMessage - find('L1 graph, MemorySaver').cpuMsPerMessage,
      p50(server.aloneLatenciesMs) / p50(saver.aloneLatenciesMs),
      duties.cpuMsPerMessage / saver.cpuMsPerMessage,
      server.cpuMsPerMessage / duties.cpuMsPerMessage,
      p50(duties.aloneLatenciesMs) / p50(saver.aloneLatenciesMs),
    ] as const;
  };
  console.log(`\ngoals (issue #14)${perRound.length > 1 ? ': the median of the rounds, each round’s own in brackets' : ''}`);
  for (const kind of kinds) {
    // Each round's figures against its own floors, measured minutes apart on the same machine.
    const each = perRound.length > 1 ? perRound.map((round) => goals(finder(round), kind)) : [];
    const [serverRatio, saverMs, aloneRatio, dutiesRatio, overDutiesRatio, dutiesAloneRatio] =
      each.length > 0 ? ([0, 1, 2, 3, 4, 5] as const).map((i) => median(each.map((g) => g[i]))) : goals(finder(rows), kind);
    const spread = (i: 0 | 1 | 2 | 3 | 4 | 5, digits: number) => (each.length > 0 ? `  [${each.map((g) => g[i].toFixed(digits)).join(', ')}]` : '');
    const line = (text: string, value: string, goal: string, rest: string) =>
      console.log(`  ${`${text} (${kind})`.padEnd(60)} ${value.padStart(8)}   goal ${goal}${rest}`);
    line('whole server / graph+checkpointer', `${serverRatio.toFixed(2)}×`, '≤ 1.25×', spread(0, 2));
    line('checkpointer − in-memory saver', `${saverMs.toFixed(1)} ms`, '≤ 5 ms', spread(1, 1));
    line('one chat alone / floor p50', `${aloneRatio.toFixed(2)}×`, '≤ 1.3×', spread(2, 2));
    // No goal of their own: how much of the goals the duties alone take, and what the server adds to them.
    line('  the duties alone: L2+ / graph+checkpointer', `${dutiesRatio.toFixed(2)}×`, '—', spread(3, 2));
    line('  whole server / L2+', `${overDutiesRatio.toFixed(2)}×`, '—', spread(4, 2));
    line('  the duties alone, one chat alone / floor p50', `${dutiesAloneRatio.toFixed(2)}×`, '—', spread(5, 2));
  }
}

function printLong(rows: Measured[], turns: number): void {
  const window = Math.min(LONG_WINDOW, Math.floor(turns / 2));
  // Medians: one turn that met a GC or a busy neighbour would move a mean of five.
  console.log(`\nlong conversation: one chat, ${turns} turns; turns 1–${window} against ${turns - window + 1}–${turns} (median of each)`);
  const cell = (value: string) => value.padStart(10);
  console.log(`${'layer'.padEnd(28)}${cell('CPU first')}${cell('CPU last')}${cell('ratio')}${cell('ms first')}${cell('ms last')}${cell('ratio')}`);
  for (const row of rows) {
    const long = row.result.long;
    if (!long) continue;
    const cpuFirst = median(long.cpuMs.slice(0, window));
    const cpuLast = median(long.cpuMs.slice(-window));
    const msFirst = median(long.latencyMs.slice(0, window));
    const msLast = median(long.latencyMs.slice(-window));
    console.log(
      `${row.name.padEnd(28)}${cell(cpuFirst.toFixed(1))}${cell(cpuLast.toFixed(1))}${cell(`${(cpuLast / cpuFirst).toFixed(2)}×`)}${cell(msFirst.toFixed(1))}${cell(msLast.toFixed(1))}${cell(`${(msLast / msFirst).toFixed(2)}×`)}`,
    );
  }
  console.log('  goal: turn 50 ≤ 1.2× turn 1, CPU and latency');
}
