import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { PathMappingEntry } from './paths.js';

/**
 * Result of one bash call. `exitCode` is null when the shell was killed by a signal from outside
 * (the timeout); a shell killed inside a sandbox reports 128 + the signal number, as bash does.
 */
export interface BashResult {
  exitCode: number | null;
  /** stdout and stderr interleaved, bounded, with host paths rewritten to virtual ones. */
  output: string;
  isTimedOut: boolean;
}

/** How to start the shell inside bubblewrap (see `bubblewrapArgs`). */
export interface BashSandbox {
  /** Absolute path of `bwrap`. */
  bwrapPath: string;
  /** Everything up to the command: namespaces, mounts, `--chdir`, `--` and the user switch. */
  args: readonly string[];
}

export interface RunBashOptions {
  /** Host working directory (the thread's workspace); unused in a sandbox, whose `--chdir` decides. */
  cwd: string;
  /** Wall-clock limit; on expiry the whole process group gets SIGKILL. */
  timeoutMs: number;
  /** Most characters returned; head and tail are kept around a note. */
  maxOutputChars: number;
  /** The complete environment of the shell (`buildSandboxEnv`): allow-listed, with per-call variables added. */
  env: Record<string, string>;
  /**
   * Virtual ↔ host prefixes: applied to the command before running when unsandboxed (a sandbox
   * mounts the folders at their virtual paths) and, reversed, to the output in both cases.
   */
  pathMapping: readonly PathMappingEntry[];
  /** Run isolated in bubblewrap; absent = a plain `bash -c` as the server's own user. */
  sandbox?: BashSandbox | undefined;
  /**
   * How long to keep reading after the shell exits while a background child still holds the
   * pipes open. Default 200. Later output of such children is drained and discarded.
   */
  drainGraceMs?: number;
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
 * The first process in the sandbox (bwrap's PID 1 only reaps): runs the command in a shell of
 * its own without fd 3, reports its exit status on fd 3, lets go of the output pipes, then stays
 * while any other process lives in the sandbox's PID namespace. bwrap tears the namespace down
 * when its first process exits, so without this a server started with `&` would die with the
 * call. `/proc/[0-9]*` lists PID 1 (bwrap) and this shell when nothing else is left.
 */
const SANDBOX_ENTRY =
  'bash -c "$1" 3>&-; code=$?; printf "%d" "$code" >&3; exec 3>&- >/dev/null 2>&1; ' +
  'while :; do set -- /proc/[0-9]*; [ "$#" -le 2 ] && exit "$code"; sleep 1; done';

/** What to spawn for `command`: bwrap around the sandbox entry, or plain bash with host paths. */
function spawnShell(command: string, options: RunBashOptions): ChildProcess {
  const { sandbox } = options;
  if (sandbox === undefined) {
    return spawn('bash', ['-c', virtualToHost(command, options.pathMapping)], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'ignore'],
    });
  }
  return spawn(sandbox.bwrapPath, [...sandbox.args, 'bash', '-c', SANDBOX_ENTRY, 'bash', command], {
    cwd: '/',
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
}

/**
 * Runs `command` with `bash -c` in its own process group, stdin from /dev/null; in bubblewrap
 * when `sandbox` is given (see `bubblewrapArgs`), else on the host with virtual paths in the
 * command rewritten to host paths. Host paths in the output are rewritten back either way.
 * At `timeoutMs` the whole group is killed with SIGKILL and `isTimedOut` is set; in a sandbox
 * that is bwrap itself, and with it (`--die-with-parent`, PID namespace) everything inside,
 * also processes that left the group with `setsid`. Background children that outlive the shell
 * keep running (a server started with `&`; in a sandbox, the sandbox stays until the last one
 * ends or the server exits); the call returns once the shell has exited and the pipes are
 * closed or `drainGraceMs` has passed.
 *
 * @throws Error when bash (or bwrap) cannot be started.
 */
export function runBash(command: string, options: RunBashOptions): Promise<BashResult> {
  const capture = new BoundedCapture(options.maxOutputChars * 4); // UTF-8 is at most 4 bytes a character.
  const drainGraceMs = options.drainGraceMs ?? 200;
  return new Promise<BashResult>((resolvePromise, rejectPromise) => {
    const child = spawnShell(command, options);
    // Both are 'pipe' in spawnShell, so never null.
    const outputs = [child.stdout, child.stderr] as Readable[];
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
    for (const stream of outputs) stream.on('data', onData);
    const finish = () => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      for (const stream of outputs) {
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
    let hasShellEnded = false;
    const shellEnded = (code: number | null) => {
      if (hasShellEnded) return;
      hasShellEnded = true;
      exitCode = code;
      graceTimer = setTimeout(finish, drainGraceMs);
    };
    // In a sandbox the shell's status comes on fd 3; bwrap exits only once the sandbox is empty.
    const status = child.stdio[3];
    if (status !== null && status !== undefined && options.sandbox !== undefined) {
      let reported = '';
      (status as Readable).on('data', (chunk: Buffer) => {
        reported += chunk.toString('latin1');
      });
      (status as Readable).on('end', () => {
        // A shell killed inside reports 128 + the signal, as bash shows it; bwrap's exit covers no report.
        if (/^\d{1,3}$/.test(reported)) shellEnded(Number(reported));
      });
      (status as unknown as { unref?: () => void }).unref?.();
    }
    child.on('exit', (code) => shellEnded(code));
    child.on('close', finish);
  });
}
