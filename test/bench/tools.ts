/**
 * A tool-calling turn end to end, against a plain-text turn in the same server process: two
 * private chats of users listed in `channels.telegram.allowed_users` (so both are trusted and
 * both runs are offered `bash`, under the default `sandbox.bash_access: trusted`) take turns, one
 * message at a time. In the plain chat the fake model answers at once; in the bash chat its first
 * answer is a `bash` call `echo bench`, which the server runs for real in the thread's sandbox,
 * and its second answer, after the tool result, is the same final text. All of it twice: with the
 * shell unsandboxed (`sandbox.isolation: none`) and in bubblewrap (`sandbox.isolation: bubblewrap`,
 * so a machine without it fails the bench instead of measuring the wrong thing). Then `runBash`
 * alone, in a probe process, unsandboxed and in bubblewrap, first at the probe's own size, then
 * grown to the server's (a spawn costs more from a bigger process).
 *
 * Latency is measured as in the Telegram benchmark: from "update available" to the call that put
 * the final text on screen. The fake model's request times split each turn into steps.
 */
import { join } from 'node:path';
import { within } from '../../src/time.js';
import { type FakeChatMessage, type FakeChatRequest, FakeOpenAI, type FakeReply, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { answerTo, FinalWatcher } from './final-watcher.js';
import { ROOT, startBenchServer, startProcess, stopProcess } from './server-process.js';
import { formatPercentiles, type LatencySummary, residentMiB, summarize } from './stats.js';

export interface ToolBenchOptions {
  /** Measured turns of each kind, after {@link WARM_UP_TURNS} of each. */
  turns: number;
  /** PostgreSQL URL for the server; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
}

type TurnKind = 'plain' | 'bash';
/** `sandbox.isolation` of the measured server. */
type Isolation = 'none' | 'bubblewrap';

/** One user message and what the fake model saw of it. */
interface Turn {
  kind: TurnKind;
  /** ms since the epoch: the update was queued for getUpdates. */
  sentAt: number;
  /** ms since the epoch: each chat-completion request of this turn arrived at the fake model. */
  modelCallsAt: number[];
  /** Content of each tool result the model was shown. */
  toolResults: string[];
  /** From `sentAt` to the call that showed the final text. */
  latencyMs?: number;
}

const PLAIN_CHAT = 700_001;
const BASH_CHAT = 700_002;
/** Unrecorded turns of each kind first, in the measured chats: JIT, both graphs, each thread's first run and sandbox folders. */
const WARM_UP_TURNS = 3;
/** A turn whose final text is not on screen by then failed; the bench stops. */
const TURN_TIMEOUT_MS = 30_000;
/** The memory extractor's own "nothing should change" answer (src/agent/memory/extraction.ts). */
const NO_MEMORY_CHANGE = '{"user": {"workContext": "", "personalContext": "", "topOfMind": ""}, "newFacts": [], "factsToRemove": []}';
const BASH_CALL = { name: 'bash', args: { description: 'bench', command: 'echo bench' } };

/** Percentiles only: the two kinds alternate, so a rate per kind would mean nothing. */
function percentilesOf(latenciesMs: readonly number[]): LatencySummary {
  return summarize(latenciesMs, Number.NaN);
}

function contentText(message: FakeChatMessage): string {
  if (message.content === null) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => part.text ?? '').join('');
}

/** The fake model's script, and the record of every turn it answered. */
class TurnScript {
  private readonly turns = new Map<string, Turn>();

  begin(text: string, kind: TurnKind, sentAt: number): Turn {
    const turn: Turn = { kind, sentAt, modelCallsAt: [], toolResults: [] };
    this.turns.set(text, turn);
    return turn;
  }

  /** A bash turn's first call gets the tool call; every other call of a turn gets the final text. */
  respond(request: FakeChatRequest): FakeReply {
    const text = lastUserText(request.messages);
    const turn = this.turns.get(text);
    // Not a bench turn: a memory extraction (30 s after a chat's last message, or at shutdown); "no change".
    if (!turn) return { text: NO_MEMORY_CHANGE };
    turn.modelCallsAt.push(Date.now());
    const last = request.messages.at(-1);
    if (last?.role === 'tool') turn.toolResults.push(contentText(last));
    if (turn.kind === 'bash' && last?.role === 'user') return { toolCalls: [BASH_CALL] };
    return { text: answerTo(text) };
  }
}

/** True when the turn did what its kind promises: one model call, or two with bash's real output between. */
function isAsScripted(turn: Turn): boolean {
  if (turn.kind === 'plain') return turn.modelCallsAt.length === 1 && turn.toolResults.length === 0;
  return turn.modelCallsAt.length === 2 && turn.toolResults.length === 1 && turn.toolResults[0]?.trim() === 'bench';
}


interface TurnDriver {
  telegram: FakeTelegram;
  watcher: FinalWatcher;
  script: TurnScript;
}

/** Sends one message and resolves once its final text is on screen. */
async function runTurn(driver: TurnDriver, kind: TurnKind, index: number): Promise<Turn> {
  const chatId = kind === 'plain' ? PLAIN_CHAT : BASH_CHAT;
  const text = `${kind} ${chatId}-${index}`;
  const sentAt = Date.now();
  const turn = driver.script.begin(text, kind, sentAt);
  const final = driver.watcher.expect(answerTo(text), sentAt);
  driver.telegram.sendUserMessage({ chatId, chatType: 'private', text });
  turn.latencyMs = await within(final, TURN_TIMEOUT_MS, () => new Error(`${kind} turn ${index}: no final text within ${TURN_TIMEOUT_MS} ms`));
  return turn;
}

/** `runBash` alone, `count` times, in a probe process grown to about `targetMiB` resident. */
async function probeBash(
  count: number,
  targetMiB: number,
  isolation: Isolation,
): Promise<{ summary: LatencySummary; residentMiB: number; mismatches: number }> {
  let report: { latenciesMs: number[]; residentMiB: number; mismatches: number } | undefined;
  const args = [join(ROOT, 'test/bench/bash-probe.ts'), String(count), String(Math.round(targetMiB)), isolation];
  const probe = await startProcess(args, (line) => {
    if (!line.startsWith('{"bash"')) return false;
    report = (JSON.parse(line) as { bash: typeof report }).bash;
    return true;
  });
  await stopProcess(probe);
  if (!report) throw new Error('bash probe printed no report');
  return { summary: percentilesOf(report.latenciesMs), residentMiB: report.residentMiB, mismatches: report.mismatches };
}

/** p50, p95 and p99 of the ms between two points of each turn; `from`/`to` may return undefined for "no such point". */
function stepSummary(turns: readonly Turn[], from: (t: Turn) => number | undefined, to: (t: Turn) => number | undefined): LatencySummary {
  const spans = turns.flatMap((turn) => {
    const start = from(turn);
    const end = to(turn);
    return start === undefined || end === undefined ? [] : [end - start];
  });
  return percentilesOf(spans);
}

const finalAt = (turn: Turn) => (turn.latencyMs === undefined ? undefined : turn.sentAt + turn.latencyMs);

function printSteps(plain: readonly Turn[], bash: readonly Turn[]): void {
  const p50 = (summary: LatencySummary) => (Number.isNaN(summary.p50Ms) ? '–' : summary.p50Ms.toFixed(1)).padStart(9);
  const row = (name: string, from: (t: Turn) => number | undefined, to: (t: Turn) => number | undefined) =>
    console.log(`${name.padEnd(34)} ${p50(stepSummary(plain, from, to))} ${p50(stepSummary(bash, from, to))}`);
  console.log(`${'where it goes (p50 of each step)'.padEnd(34)} ${'plain ms'.padStart(9)} ${'bash ms'.padStart(9)}`);
  row('  message → model call 1', (t) => t.sentAt, (t) => t.modelCallsAt[0]);
  row('  model call 1 → model call 2', (t) => t.modelCallsAt[0], (t) => t.modelCallsAt[1]);
  row('  last model call → final edit', (t) => t.modelCallsAt.at(-1), finalAt);
}

interface Measured {
  plain: Turn[];
  bash: Turn[];
  serverMiB: number;
}

/** Starts a server for two allow-listed chats, warms up, then alternates plain and bash turns. */
async function measureTurns(options: ToolBenchOptions, isolation: Isolation): Promise<Measured> {
  const telegram = new FakeTelegram();
  const model = new FakeOpenAI();
  await Promise.all([telegram.start(), model.start()]);
  const script = new TurnScript();
  model.respond = (request) => script.respond(request);
  const server = await startBenchServer({
    telegram,
    model,
    databaseUrl: options.databaseUrl,
    allowedUsers: [PLAIN_CHAT, BASH_CHAT],
    extraConfig: `sandbox: { isolation: ${isolation} }`,
  });
  const driver: TurnDriver = { telegram, watcher: new FinalWatcher(telegram), script };
  const measured: Measured = { plain: [], bash: [], serverMiB: Number.NaN };
  try {
    for (let i = 0; i < WARM_UP_TURNS; i++) {
      await runTurn(driver, 'plain', -1 - i);
      await runTurn(driver, 'bash', -1 - i);
    }
    for (let i = 0; i < options.turns; i++) {
      // Alternating, so both kinds see the same machine: JIT state, GC, neighbours' load.
      measured.plain.push(await runTurn(driver, 'plain', i));
      measured.bash.push(await runTurn(driver, 'bash', i));
    }
    measured.serverMiB = await residentMiB(server.pid as number);
  } finally {
    await stopProcess(server);
    await Promise.all([telegram.stop(), model.stop()]);
  }
  return measured;
}

/** One row of per-percentile figures, e.g. ratios or differences of two summaries. */
function formatCombined(name: string, a: LatencySummary, b: LatencySummary, combine: (a: number, b: number) => number, digits: number): string {
  const cells = (['p50Ms', 'p95Ms', 'p99Ms'] as const).map((key) => combine(a[key], b[key]).toFixed(digits).padStart(9));
  return `${name.padEnd(24)} ${cells.join(' ')}`;
}

/**
 * Runs the tool benchmark and prints, for the unsandboxed and the bubblewrap server, p50/p95/p99
 * of plain and bash turns, their ratios and differences, where a turn's time goes and how many
 * turns went as scripted; then the bubblewrap/none ratio of bash turns, and `runBash` alone both
 * ways at two process sizes. Turns that did not go as scripted (a bash turn that never got
 * `bench` back) are counted and left out of the figures. Takes about `turns` × 0.5 s plus two
 * server and four probe start-ups.
 * @throws Error when a turn's final text is not on screen within 30 s, or a process fails to start.
 */
export async function runToolBench(options: ToolBenchOptions): Promise<void> {
  const database = options.databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  console.log(
    `\ntools on ${database}: ${options.turns} plain and ${options.turns} bash (echo bench) turns, alternating, in two chats of allow-listed users, one message at a time, fake model with zero delay; once unsandboxed, once in bubblewrap`,
  );
  const bashSummaries: Partial<Record<Isolation, LatencySummary>> = {};
  let serverSize = 0;
  for (const isolation of ['none', 'bubblewrap'] as const) {
    const { plain, bash, serverMiB } = await measureTurns(options, isolation);
    serverSize = Math.max(serverSize, serverMiB);
    const plainOk = plain.filter(isAsScripted);
    const bashOk = bash.filter(isAsScripted);
    const plainSummary = percentilesOf(plainOk.map((t) => t.latencyMs as number));
    const bashSummary = percentilesOf(bashOk.map((t) => t.latencyMs as number));
    bashSummaries[isolation] = bashSummary;
    console.log(`\nsandbox.isolation: ${isolation}`);
    console.log(`${''.padEnd(24)} ${'p50 ms'.padStart(9)} ${'p95 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
    console.log('one turn at a time (latency without queueing)');
    console.log(formatPercentiles('  plain: 1 model call', plainSummary));
    console.log(formatPercentiles('  bash: 2 calls + bash', bashSummary));
    console.log(formatCombined('ratio (bash / plain)', bashSummary, plainSummary, (a, b) => a / b, 2));
    console.log(formatCombined('overhead (bash − plain)', bashSummary, plainSummary, (a, b) => a - b, 1));
    printSteps(plainOk, bashOk);
    const mismatches = plain.length - plainOk.length + (bash.length - bashOk.length);
    console.log(
      `checked: ${bashOk.length}/${bash.length} bash turns got "bench" from bash between 2 model calls, ${plainOk.length}/${plain.length} plain turns made 1 call; ${mismatches} mismatches (left out above)`,
    );
  }
  const { none, bubblewrap } = bashSummaries as Record<Isolation, LatencySummary>;
  console.log(formatCombined('\nbash turn: bwrap / none', bubblewrap, none, (a, b) => a / b, 2));

  // After the servers stopped, so the probes have the machine to itself.
  console.log(`\nrunBash('echo bench') alone, ${options.turns} times in a probe process: bench-sized, then server-sized (${serverSize.toFixed(0)} MiB)`);
  console.log(`${''.padEnd(24)} ${'p50 ms'.padStart(9)} ${'p95 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
  let probeMismatches = 0;
  for (const targetMiB of [0, serverSize]) {
    const plainProbe = await probeBash(options.turns, targetMiB, 'none');
    const sandboxed = await probeBash(options.turns, targetMiB, 'bubblewrap');
    probeMismatches += plainProbe.mismatches + sandboxed.mismatches;
    console.log(formatPercentiles(`  none at ${plainProbe.residentMiB} MiB`, plainProbe.summary));
    console.log(formatPercentiles(`  bwrap at ${sandboxed.residentMiB} MiB`, sandboxed.summary));
    console.log(formatCombined('  ratio (bwrap / none)', sandboxed.summary, plainProbe.summary, (a, b) => a / b, 2));
  }
  console.log(`checked: ${probeMismatches} mismatches in the probes`);
}
