import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { AppError } from '../errors.js';

/** The file in `data_dir` that names the process holding it. */
export const DATA_DIR_LOCK_FILE = 'server.lock';

/** Who holds a data dir: what a second process is told, and how it tells a live holder from a dead one. */
export interface DataDirHolder {
  pid: number;
  /** The script it runs (`main.mjs`, `cli.mjs`) and its arguments: no secrets are passed there. */
  command: string;
  startedAt: string;
  /** Linux: boot id and the process's start time, so a pid reused after the holder died is not taken for it. */
  processStart?: string;
}

/** Another live process holds the data dir: only one process may open the embedded database. */
export class DataDirInUseError extends AppError {
  constructor(
    dataDir: string,
    readonly holder: DataDirHolder,
  ) {
    const text =
      `data_dir ${dataDir} is in use by another deerflow-channels process (pid ${holder.pid}, ${holder.command}, since ${holder.startedAt}): ` +
      'stop it first. The embedded database admits one process at a time; while the server runs, manage accounts through its API or console (docs/accounts.md).';
    super('DATA_DIR_IN_USE', text, { status: 409, userMessage: text });
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  /** Removes the lock file if it still names this process. */
  release(): void;
}

/**
 * Takes `dataDir` for this process, or throws {@link DataDirInUseError} naming the process that
 * has it. PGlite is one process's database: a second server or CLI on the same files corrupts
 * them, and a second server would also take the chat platforms' connections over before failing
 * on the port (issue #15). A lock left by a process that died (kill -9, power loss) is taken over.
 *
 * @throws DataDirInUseError when a live process holds the data dir, or another one is taking it at this moment.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, DATA_DIR_LOCK_FILE);
  const holder: DataDirHolder = {
    pid: process.pid,
    command: [basename(process.argv[1] ?? 'node'), ...process.argv.slice(2)].join(' '),
    startedAt: new Date().toISOString(),
  };
  const processStart = processStartOf(process.pid);
  if (processStart !== undefined) holder.processStart = processStart;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createExclusively(path, JSON.stringify(holder))) return { release: () => releaseIfHeld(path, holder) };
    const current = readHolder(path);
    if (current !== undefined && isRunning(current)) throw new DataDirInUseError(dataDir, current);
    takeAwayStale(path, current);
  }
  throw new DataDirInUseError(dataDir, readHolder(path) ?? { pid: 0, command: 'another process starting now', startedAt: new Date().toISOString() });
}

/**
 * True when `path` was created by this call, already holding `content`; false when it exists.
 * Written aside and linked into place, so no other process ever reads a half-written lock.
 */
function createExclusively(path: string, content: string): boolean {
  const written = `${path}.${process.pid}.new`;
  const fd = openSync(written, 'w', 0o600);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(written, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(written, { force: true });
  }
}

/**
 * Moves a dead holder's lock out of the way. Two processes may find the same stale lock; the
 * file is renamed first, and put back when it turns out to be the other one's fresh lock.
 */
function takeAwayStale(path: string, stale: DataDirHolder | undefined): void {
  const aside = `${path}.${process.pid}.stale`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readHolder(aside);
  const isTheStaleOne = moved === undefined || (stale !== undefined && moved.pid === stale.pid && moved.startedAt === stale.startedAt);
  if (!isTheStaleOne) {
    try {
      linkSync(aside, path);
    } catch {
      // A third process created one meanwhile: the next attempt finds it.
    }
  }
  rmSync(aside, { force: true });
}

function releaseIfHeld(path: string, holder: DataDirHolder): void {
  const current = readHolder(path);
  if (current?.pid === holder.pid && current.startedAt === holder.startedAt) rmSync(path, { force: true });
}

/** The holder the file names; undefined when it is gone or unreadable (not a lock this code wrote). */
function readHolder(path: string): DataDirHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<DataDirHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.startedAt !== 'string') return undefined;
    const holder: DataDirHolder = { pid: parsed.pid, command: String(parsed.command ?? '?'), startedAt: parsed.startedAt };
    if (typeof parsed.processStart === 'string') holder.processStart = parsed.processStart;
    return holder;
  } catch {
    return undefined;
  }
}

function isRunning(holder: DataDirHolder): boolean {
  // This very pid is not a holder: it is a previous run's lock in a new pid namespace (a container's pid 1).
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it exists, under another user.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const started = processStartOf(holder.pid);
  return holder.processStart === undefined || started === undefined || started === holder.processStart;
}

/** `<boot id>:<start time in clock ticks>` of a Linux process; undefined elsewhere or when it is gone. */
function processStartOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name's closing parenthesis start at field 3; starttime is field 22.
    const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return startTicks === undefined ? undefined : `${bootId}:${startTicks}`;
  } catch {
    return undefined;
  }
}
