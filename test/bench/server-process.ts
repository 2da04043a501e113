/**
 * Child processes of the benchmarks: the server started as `npm start` starts it, the baseline
 * bot and probes, each a TypeScript entry point run through tsx in a fresh temporary folder.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FakeOpenAI } from '../fakes/openai/index.js';
import type { FakeTelegram } from '../fakes/telegram/index.js';
import { startLoadScaledTimer } from '../helpers/load-scaled-timer.js';

/** The repository root, absolute, with a trailing slash. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** What `npm start` runs: `.build/main.mjs`, made by {@link buildServerBundle}. */
export const SERVER_BUNDLE = join(ROOT, '.build/main.mjs');

/** Bundles the current sources as `npm start` does (`npm run bundle`); the bench runs it once first. */
export function buildServerBundle(): void {
  execFileSync('npm', ['run', '--silent', 'bundle'], { cwd: ROOT, stdio: 'inherit' });
}
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

/**
 * How long a child may take to say it is ready on an idle machine, stretched by the load while
 * it starts (`startLoadScaledTimer`). Only there to end a bench that would hang.
 */
const READY_BASE_MS = 120_000;
/** How many of a child's last stdout lines a failure shows (its stderr is the bench's own). */
const TAIL_LINES = 40;

/** Child processes and temporary folders of this run, cleaned up when the bench exits. */
const children: ChildProcess[] = [];
const temporaryDirs: string[] = [];
function cleanUp(): void {
  // An orphaned bot would keep polling a port a later fake may reuse, and steal its updates.
  for (const child of children) child.kill('SIGKILL');
  // A full run writes hundreds of MB of PGlite data.
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
  temporaryDirs.length = 0;
}
process.once('exit', cleanUp);
// Ctrl-C or a kill ends the bench without 'exit' handlers: clean up, then die of the signal as usual.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  const onSignal = (): void => {
    cleanUp();
    process.off(signal, onSignal);
    process.kill(process.pid, signal);
  };
  process.on(signal, onSignal);
}

function temporaryDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dfc-bench-'));
  temporaryDirs.push(dir);
  return dir;
}

/**
 * Starts a TypeScript entry point (through tsx) or, with `runsCompiled`, a JavaScript one in its
 * own process (environment: `PATH` and `options.environment`, nothing else) and resolves
 * once a line of its stdout satisfies `isReady`; later stdout is read and dropped.
 * The process is SIGKILLed when this one exits or is ended by a signal.
 * @throws Error, with the last lines of its stdout, when the process exits before it was ready
 *   or is not ready within two minutes stretched by the machine's load (it is then killed).
 */
export async function startProcess(
  args: string[],
  isReady: (line: string) => boolean,
  { runsCompiled = false, environment = {} }: { runsCompiled?: boolean; environment?: Record<string, string> | undefined } = {},
): Promise<ChildProcess> {
  const child = spawn(process.execPath, runsCompiled ? args : ['--import', TSX, ...args], {
    cwd: temporaryDir(),
    env: { ...environment, PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lastLines: string[] = [];
  const tail = () => `--- its stdout (last ${TAIL_LINES} lines) ---\n${lastLines.join('\n') || '(nothing)'}`;
  const onData = (() => {
    let buffered = '';
    return (chunk: Buffer): string[] => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      lastLines.push(...lines);
      lastLines.splice(0, Math.max(0, lastLines.length - TAIL_LINES));
      return lines;
    };
  })();
  await new Promise<void>((resolve, reject) => {
    const timer = startLoadScaledTimer(READY_BASE_MS, (waitedMs) => {
      child.kill('SIGKILL');
      reject(new Error(`${args[0]} was not ready within ${waitedMs} ms; killed\n${tail()}`));
    });
    const readUntilReady = (chunk: Buffer): void => {
      if (!onData(chunk).some(isReady)) return;
      timer.cancel();
      child.stdout?.off('data', readUntilReady);
      resolve();
    };
    child.stdout?.on('data', readUntilReady);
    // 'close' rather than 'exit': its stdout is read to the end by then, for the tail.
    child.once('close', (code, signal) => {
      timer.cancel();
      reject(new Error(`${args[0]} exited with ${signal ?? code} before it was ready\n${tail()}`));
    });
  });
  child.stdout?.resume();
  return child;
}

/** SIGTERM, then resolves once the process exited (at once when it already has). */
export async function stopProcess(child: ChildProcess): Promise<void> {
  // A process killed by a signal has no exit code, only its signal.
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export interface BenchServerOptions {
  telegram: FakeTelegram;
  model: FakeOpenAI;
  /** PostgreSQL URL; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
  /** `channels.telegram.allowed_users`; absent or empty → everyone may write and nobody gets bash. */
  allowedUsers?: readonly number[];
  /** Top-level YAML added to the config as is (e.g. a `sandbox:` block). */
  extraConfig?: string;
  /** Node options before the entry point, e.g. `--cpu-prof`. */
  nodeArgs?: readonly string[];
  /** Environment variables beside `PATH`, for the bench's preloads (never the server's config). */
  environment?: Record<string, string>;
}

/** The Telegram bench server: {@link startChatBenchServer} with the fake Bot API as its one channel. */
export async function startBenchServer(options: BenchServerOptions): Promise<ChildProcess> {
  const { telegram, allowedUsers = [] } = options;
  const allowed = allowedUsers.length > 0 ? `, allowed_users: [${allowedUsers.join(', ')}]` : '';
  return startChatBenchServer({
    ...options,
    channel: `telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1${allowed} }`,
  });
}

/**
 * A config in a fresh folder (its data dir beside it) naming the fake model and one channel (its
 * `channels:` entry as one YAML line), with `channelSettings` (YAML lines such as
 * `inbound_queue_maxsize: 50`) beside it. Resolves with its path.
 */
export function writeChatBenchConfig(options: {
  model: FakeOpenAI;
  channel: string;
  databaseUrl?: string | undefined;
  extraConfig?: string;
  channelSettings?: readonly string[];
}): string {
  const { model, databaseUrl } = options;
  const dir = temporaryDir();
  const configPath = join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    `server: { port: 0 }
data_dir: ${join(dir, 'data')}
${databaseUrl ? `database: { url: "${databaseUrl}" }` : ''}
${options.extraConfig ?? ''}
log: { level: info }  # the bench reads the "server listening" line
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-bench, max_retries: 0 }
channels:
  max_concurrency: 5
${(options.channelSettings ?? []).map((line) => `  ${line}\n`).join('')}  ${options.channel}
`,
  );
  return configPath;
}

/**
 * Writes a config naming the fake model and one channel (its `channels:` entry as one YAML line)
 * in a fresh data folder and starts the server with it as `npm start` does (its bundle, see
 * {@link buildServerBundle}); resolves once the
 * server logged that it listens. Every chat platform's bench starts its server here, so they
 * differ only in the channel.
 */
export async function startChatBenchServer(options: {
  model: FakeOpenAI;
  channel: string;
  databaseUrl?: string | undefined;
  /** Top-level YAML added to the config as is (e.g. a `redis:` block). */
  extraConfig?: string;
  /** Node options before the entry point, e.g. `--cpu-prof`. */
  nodeArgs?: readonly string[];
  /** Environment variables beside `PATH`, for the bench's preloads (never the server's config). */
  environment?: Record<string, string>;
}): Promise<ChildProcess> {
  const configPath = writeChatBenchConfig(options);
  // The bench's own preloads (e.g. test/bench/pglite-statements.ts) are TypeScript: tsx loads them, the server stays the bundle.
  const nodeArgs = options.nodeArgs === undefined || options.nodeArgs.length === 0 ? [] : ['--import', TSX, ...options.nodeArgs];
  return startProcess([...nodeArgs, SERVER_BUNDLE, '--config', configPath], (line) => line.includes('"server listening"'), {
    runsCompiled: true,
    environment: options.environment,
  });
}
