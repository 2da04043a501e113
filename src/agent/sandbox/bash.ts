import { spawn } from 'node:child_process';
import type { PathMappingEntry } from './paths.js';

/** Result of one bash call. `exitCode` is null when the shell was killed by a signal. */
export interface BashResult {
  exitCode: number | null;
  /** stdout and stderr interleaved, bounded, with host paths rewritten to virtual ones. */
  output: string;
  isTimedOut: boolean;
}

export interface RunBashOptions {
  /** Host working directory (the thread's workspace). */
  cwd: string;
  /** Wall-clock limit; on expiry the whole process group gets SIGKILL. */
  timeoutMs: number;
  /** Most characters returned; head and tail are kept around a note. */
  maxOutputChars: number;
  /** The complete environment of the shell: already scrubbed, with per-call variables added. */
  env: Record<string, string>;
  /** Virtual ↔ host prefixes: applied to the command before running and, reversed, to the output. */
  pathMapping: readonly PathMappingEntry[];
  /**
   * How long to keep reading after the shell exits while a background child still holds the
   * pipes open. Default 200. Later output of such children is drained and discarded.
   */
  drainGraceMs?: number;
}

const NAME_PATTERNS = ['KEY', 'SECRET', 'TOKEN', 'PASSWORD', 'PASSWD', 'CREDENTIAL', 'DSN'];
/** Short secret words, matched as whole `_`-separated words so PATH and PASSENGER survive: GH_PAT, NPM_AUTH, DB_PASS. */
const NAME_WORDS = /(^|_)(PAT|AUTH|PASS|COOKIE)(_|$)/;
const CONNECTION_STRING_NAMES = new Set([
  'DATABASE_URL',
  'REDIS_URL',
  'MONGODB_URI',
  'MONGO_URL',
  'POSTGRES_URL',
  'MYSQL_URL',
  'AMQP_URL',
  'RABBITMQ_URL',
  'CELERY_BROKER_URL',
]);
/** `scheme://user:pass@` or `scheme://token@`: credentials embedded in a URL. */
const URL_WITH_CREDENTIALS = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]+@/i;

/**
 * The inherited environment minus anything that looks like a secret: names containing KEY,
 * SECRET, TOKEN, PASSWORD, PASSWD, CREDENTIAL or DSN (any case), the words PAT, AUTH, PASS or
 * COOKIE (`GH_PAT`, `NPM_AUTH`, `DB_PASS`), well-known connection-string
 * variables (DATABASE_URL, REDIS_URL, …), and any `*_URL`/`*_URI` whose value embeds credentials.
 * Undefined values are dropped. Pure: the composition root passes the process environment in.
 */
export function scrubEnvironment(baseEnv: Record<string, string | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(baseEnv)) {
    if (value === undefined) continue;
    const upper = name.toUpperCase();
    if (NAME_PATTERNS.some((pattern) => upper.includes(pattern)) || NAME_WORDS.test(upper)) continue;
    if (CONNECTION_STRING_NAMES.has(upper)) continue;
    if ((upper.endsWith('_URL') || upper.endsWith('_URI')) && URL_WITH_CREDENTIALS.test(value)) continue;
    kept[name] = value;
  }
  return kept;
}

/**
 * The environment of one bash call: `baseEnv` scrubbed, `HOME` set to the workspace, then
 * `perCallEnv` on top (those variables are trusted and exist for this call only).
 */
export function buildSandboxEnv(options: {
  baseEnv: Record<string, string | undefined>;
  homeDir: string;
  perCallEnv: Record<string, string>;
}): Record<string, string> {
  return { ...scrubEnvironment(options.baseEnv), HOME: options.homeDir, ...options.perCallEnv };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function rewritePrefixes(text: string, pairs: Array<[from: string, to: string]>): string {
  // Longest prefix first, and only at a path-segment boundary, so `/mnt/skillsfoo` stays as is.
  const sorted = [...pairs].sort((a, b) => b[0].length - a[0].length);
  let result = text;
  for (const [from, to] of sorted) {
    result = result.replace(new RegExp(`${escapeRegExp(from)}(?=$|[^A-Za-z0-9_.-])`, 'g'), () => to);
  }
  return result;
}

/** Replaces `/mnt/user-data` and `/mnt/skills` prefixes in a command with host folders. */
export function virtualToHost(command: string, mapping: readonly PathMappingEntry[]): string {
  const seen = new Set<string>();
  const pairs: Array<[string, string]> = [];
  for (const entry of mapping) {
    if (seen.has(entry.virtualPath)) continue; // The first host path per prefix is the canonical one.
    seen.add(entry.virtualPath);
    pairs.push([entry.virtualPath, entry.hostPath]);
  }
  return rewritePrefixes(command, pairs);
}

/** Replaces host folders (and their real paths) in output with the virtual prefixes. */
export function hostToVirtual(output: string, mapping: readonly PathMappingEntry[]): string {
  return rewritePrefixes(
    output,
    mapping.map((entry): [string, string] => [entry.hostPath, entry.virtualPath]),
  );
}

/** Keeps the first bytes and a rolling window of the last bytes; counts the rest. */
class BoundedCapture {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  totalBytes = 0;
  hasNul = false;

  constructor(private readonly capBytes: number) {}

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    if (!this.hasNul && chunk.includes(0)) this.hasNul = true;
    let rest = chunk;
    if (this.headBytes < this.capBytes) {
      const take = Math.min(rest.length, this.capBytes - this.headBytes);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes - (this.tail[0]?.length ?? 0) >= this.capBytes) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  parts(): { head: Buffer; tail: Buffer; omittedBytes: number } {
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.capBytes) tail = tail.subarray(tail.length - this.capBytes);
    return { head, tail, omittedBytes: this.totalBytes - head.length - tail.length };
  }
}

const REPLACEMENT = '\uFFFD';

function looksBinary(text: string): boolean {
  if (text.length === 0) return false;
  let bad = 0;
  for (const char of text) if (char === REPLACEMENT) bad += 1;
  return bad / text.length > 0.05;
}

/** Decodes captured output into bounded text; binary output becomes a one-line note. */
function renderOutput(capture: BoundedCapture, maxOutputChars: number): string {
  const { head, tail, omittedBytes } = capture.parts();
  const decoder = () => new TextDecoder('utf-8', { fatal: false });
  const headText = decoder().decode(head);
  const tailText = decoder().decode(tail);
  if (capture.hasNul || looksBinary(headText + tailText)) return `[binary output, ${capture.totalBytes} bytes]`;
  const whole = omittedBytes === 0 ? headText + tailText : undefined;
  if (whole !== undefined && whole.length <= maxOutputChars) return whole;
  const keepHead = Math.ceil(maxOutputChars / 2);
  const keepTail = maxOutputChars - keepHead;
  const first = (whole ?? headText).slice(0, keepHead);
  const last = keepTail > 0 ? (whole ?? tailText).slice(-keepTail) : '';
  return `${first}\n[... output truncated: showing the first ${first.length} and last ${last.length} characters of ${capture.totalBytes} bytes ...]\n${last}`;
}

/**
 * Runs `command` with `bash -c` in its own process group, stdin from /dev/null.
 * Virtual paths in the command are rewritten to host paths first; host paths in the output back.
 * At `timeoutMs` the whole group is killed with SIGKILL and `isTimedOut` is set. Background
 * children that outlive the shell keep running (a server started with `&`); the call returns
 * once the shell has exited and the pipes are closed or `drainGraceMs` has passed.
 *
 * @throws Error when bash cannot be started.
 */
export function runBash(command: string, options: RunBashOptions): Promise<BashResult> {
  const capture = new BoundedCapture(options.maxOutputChars * 4); // UTF-8 is at most 4 bytes a character.
  const drainGraceMs = options.drainGraceMs ?? 200;
  return new Promise<BashResult>((resolvePromise, rejectPromise) => {
    const child = spawn('bash', ['-c', virtualToHost(command, options.pathMapping)], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let isTimedOut = false;
    let exitCode: number | null = null;
    let isSettled = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    };
    const timer = setTimeout(() => {
      isTimedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onData = (chunk: Buffer) => capture.push(chunk);
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const finish = () => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      for (const stream of [child.stdout, child.stderr]) {
        // Keep draining what background children still write, so they never block on a full pipe.
        stream.off('data', onData);
        stream.resume();
        (stream as unknown as { unref?: () => void }).unref?.();
      }
      child.unref();
      const output = hostToVirtual(renderOutput(capture, options.maxOutputChars), options.pathMapping);
      resolvePromise({ exitCode, output, isTimedOut });
    };
    child.on('error', (error) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      rejectPromise(error);
    });
    child.on('exit', (code) => {
      exitCode = code;
      graceTimer = setTimeout(finish, drainGraceMs);
    });
    child.on('close', finish);
  });
}
