/**
 * Finds processes a test run left behind, by what they carry from it: the run's marker in their
 * environment (`/proc/<pid>/environ`, as they were started) or a working directory inside the
 * run's temporary folder. The second catches what the server starts with an environment of its
 * own, such as an agent's shell and what it left running in the background. Linux only (the
 * project machine and CI); elsewhere nothing is found.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { sep } from 'node:path';

export interface LeftoverProcess {
  pid: number;
  /** Its command line, arguments separated by spaces. */
  commandLine: string;
}

export interface LeftoverQuery {
  /** `<name>=<value>` that marks the run in a process's environment, e.g. `DFC_TEST_RUN=…`. */
  marker: string;
  /** The run's temporary folder: a process working anywhere inside it is the run's. */
  temporaryDirectory?: string;
  /**
   * Processes not to report, with their children (vitest's main process, whose workers carry
   * the marker too and are vitest's to end).
   */
  excludingChildrenOf: number;
}

function readProcText(pid: string, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    // Gone meanwhile, or not ours to read.
    return undefined;
  }
}

/** Parent pid and state from `/proc/<pid>/stat`; the command name in it may hold spaces and parentheses. */
function parentAndState(stat: string): { ppid: number; state: string } | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [state, ppid] = fields;
  if (state === undefined || ppid === undefined) return undefined;
  return { ppid: Number(ppid), state };
}

function isInside(directory: string, path: string): boolean {
  return path === directory || path.startsWith(directory.endsWith(sep) ? directory : directory + sep);
}

/** Running processes (zombies excepted: they are dead, waiting for their parent) that belong to the run `query` describes. */
export function findLeftoverProcesses(query: LeftoverQuery): LeftoverProcess[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const found: LeftoverProcess[] = [];
  for (const pid of pids) {
    if (Number(pid) === query.excludingChildrenOf || Number(pid) === process.pid) continue;
    const stat = readProcText(pid, 'stat');
    const status = stat === undefined ? undefined : parentAndState(stat);
    if (status === undefined || status.state === 'Z' || status.ppid === query.excludingChildrenOf) continue;
    const isMarked = (readProcText(pid, 'environ') ?? '').split('\0').includes(query.marker);
    let isInTemporaryDirectory = false;
    if (!isMarked && query.temporaryDirectory !== undefined) {
      try {
        isInTemporaryDirectory = isInside(query.temporaryDirectory, readlinkSync(`/proc/${pid}/cwd`));
      } catch {
        // Gone meanwhile, or not ours to read.
      }
    }
    if (!isMarked && !isInTemporaryDirectory) continue;
    const commandLine = (readProcText(pid, 'cmdline') ?? '').split('\0').filter(Boolean).join(' ');
    found.push({ pid: Number(pid), commandLine });
  }
  return found;
}
