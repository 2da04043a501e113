import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { trackChild, withRunMarker } from '../helpers/child-processes.js';
import { startLoadScaledTimer } from '../helpers/load-scaled-timer.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The bundle `npm start` runs, built once per test run by test/setup/bundle.ts. */
export const SERVER_BUNDLE = join(ROOT, '.build/main.mjs');
/** The bundle `npm run cli` runs, built with the server's. */
const CLI_BUNDLE = join(ROOT, '.build/cli.mjs');

/** `npm run cli -- …` as an operator types it in `cwd`; resolves with its exit code and output. */
export function runCli(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return runToExit(process.execPath, [CLI_BUNDLE, ...args], { cwd, env: { PATH: process.env.PATH ?? '' } });
}

/** Runs `file` in `cwd` with exactly `env` (and the run's marker), tracked; resolves with its exit code and output once it ends. */
export function runToExit(file: string, args: string[], options: { cwd: string; env: Record<string, string> }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { cwd: options.cwd, env: withRunMarker(options.env), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
    trackChild(child, `${file} ${args.join(' ')}`);
  });
}

/**
 * How long a server may take to say it listens on an idle machine before the wait gives up,
 * stretched by the load (see `startLoadScaledTimer`). Only there to end a hung run: start-up
 * takes seconds, but minutes on a machine busy with other work.
 */
const LISTEN_BASE_MS = 120_000;
/** The same for a log line in `waitForLog`, unless the caller names its own. */
const LOG_LINE_BASE_MS = 10_000;
/** The same for exiting after SIGTERM in `stop()`, past which the server is SIGKILLed. */
const STOP_BASE_MS = 60_000;
/** How much of the server's own output a failure shows. */
const TAIL_LINES = 40;
const TAIL_CHARS = 8000;

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Working directory; a fresh temp folder keeps `./config.yaml` and `./.data` of the repo out. */
  cwd?: string;
  /** The script node runs, relative to `cwd`; default the bundle `npm start` runs ({@link SERVER_BUNDLE}). */
  script?: string;
}

export interface ServerProcess {
  /** `http://127.0.0.1:<port>` once listening. */
  url: string;
  /** Every JSON log line so far. */
  logs: Record<string, unknown>[];
  stderr: () => string;
  /**
   * Resolves with the first log line, already written or still to come, that `matches`. For
   * work the server does in the background, where no chat message marks the end. Rejects, with
   * the end of the server's output, when the server exits first or after `timeoutMs` (default
   * 10000) stretched by the machine's load.
   */
  waitForLog(matches: (entry: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /**
   * SIGTERM, then wait for exit; resolves with the exit code. A server still running a minute
   * later (stretched by the load) is SIGKILLed, and the promise rejects with its output's end.
   */
  stop(): Promise<number | null>;
  child: ChildProcess;
}

/**
 * Matches the log line saying `channel` started. It may come after 'server listening': wait for
 * it (`waitForLog`) before anything that needs the channel running.
 */
export function channelStarted(channel: string): (entry: Record<string, unknown>) => boolean {
  return (entry) => entry.msg === 'channel started' && entry.channel === channel;
}

/** Matches the log line saying a start of `channel` failed, whether it will be retried or not. */
export function channelFailedToStart(channel: string): (entry: Record<string, unknown>) => boolean {
  return (entry) => entry.msg === 'channel failed to start' && entry.channel === channel;
}

/** Writes `yaml` to a fresh folder (whose `.data` holds the database) and returns the file's path. */
export function writeConfig(yaml: string): { path: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dfc-e2e-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, yaml);
  return { path, dir };
}

/**
 * Runs the server as `npm start` does (its bundle of `src/main.ts`, or `options.script`) in its own process, tracked
 * so that the test run ends it even when the test that started it cannot
 * (test/helpers/child-processes.ts).
 */
function spawnMain(args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(process.execPath, [options.script ?? SERVER_BUNDLE, ...args], {
    cwd: options.cwd ?? mkdtempSync(join(tmpdir(), 'dfc-cwd-')),
    env: withRunMarker({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return trackChild(child, `server ${args.join(' ')}`);
}

/** The server's output as it arrives: JSON log lines parsed, and the ends of stdout and stderr kept for failures. */
class ServerOutput {
  readonly logs: Record<string, unknown>[] = [];
  readonly listeners = new Set<(entry: Record<string, unknown>) => void>();
  stderr = '';
  private readonly lastLines: string[] = [];
  private buffered = '';

  constructor(child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    child.stdout?.on('data', (chunk: Buffer) => this.read(chunk.toString()));
  }

  private read(text: string): void {
    this.buffered += text;
    const lines = this.buffered.split('\n');
    this.buffered = lines.pop() ?? '';
    for (const line of lines) {
      this.lastLines.push(line);
      if (this.lastLines.length > TAIL_LINES) this.lastLines.shift();
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue; // not a log line
      }
      this.logs.push(entry);
      for (const listener of [...this.listeners]) listener(entry);
    }
  }

  /** The last lines of stdout and the end of stderr, for an error message. */
  tail(): string {
    const stdout = [...this.lastLines, this.buffered].filter(Boolean).join('\n');
    const stderr = this.stderr.slice(-TAIL_CHARS);
    return `--- server stdout (last ${TAIL_LINES} lines) ---\n${stdout || '(nothing)'}\n--- server stderr (end) ---\n${stderr || '(nothing)'}`;
  }
}

/** Describes how a process ended, for error messages. */
function describeExit(child: ChildProcess): string {
  return child.signalCode !== null ? `was killed by ${child.signalCode}` : `exited with ${child.exitCode}`;
}

/**
 * Starts `src/main.ts` exactly as `npm start` does, and resolves once it logged that it listens.
 * Rejects, with the end of the server's output, when it exits first or has not listened within
 * `listenBaseMs` (default two minutes) stretched by the machine's load; it is then killed.
 */
export async function startServerProcess(args: string[], options: SpawnOptions = {}, listenBaseMs = LISTEN_BASE_MS): Promise<ServerProcess> {
  const child = spawnMain(args, options);
  const output = new ServerOutput(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  // After 'exit' once stdout and stderr are drained too, so a failure shows the server's last words.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  const waitForEntry = (matches: (entry: Record<string, unknown>) => boolean, baseMs: number, what: string): Promise<Record<string, unknown>> => {
    const found = output.logs.find(matches);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        timer.cancel();
        output.listeners.delete(listener);
      };
      const listener = (entry: Record<string, unknown>): void => {
        if (!matches(entry)) return;
        finish();
        resolve(entry);
      };
      const timer = startLoadScaledTimer(baseMs, (waitedMs) => {
        finish();
        reject(new Error(`server did not log ${what} within ${waitedMs} ms\n${output.tail()}`));
      });
      output.listeners.add(listener);
      // A server that is gone writes no more lines.
      void closed.then(() => {
        if (!output.listeners.has(listener)) return;
        finish();
        reject(new Error(`server ${describeExit(child)} before it logged ${what}\n${output.tail()}`));
      });
    });
  };

  let listening: Record<string, unknown>;
  try {
    listening = await waitForEntry((entry) => entry.msg === 'server listening', listenBaseMs, "'server listening'");
  } catch (error) {
    // A server that never listened is no use to the test, and must not outlive it.
    child.kill('SIGKILL');
    throw error;
  }

  return {
    url: String(listening.url),
    logs: output.logs,
    stderr: () => output.stderr,
    waitForLog: (matches, timeoutMs = LOG_LINE_BASE_MS) => waitForEntry(matches, timeoutMs, 'a matching line'),
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      let waitedMs: number | undefined;
      const timer = startLoadScaledTimer(STOP_BASE_MS, (ms) => {
        waitedMs = ms;
        child.kill('SIGKILL');
      });
      const code = await exited;
      timer.cancel();
      if (waitedMs !== undefined) throw new Error(`server did not exit within ${waitedMs} ms of SIGTERM; killed\n${output.tail()}`);
      return code;
    },
  };
}

/** Runs `src/main.ts` expecting it to exit on its own; resolves with its exit code, stdout and stderr. */
export function runMainToExit(args: string[], options: SpawnOptions = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnMain(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}
