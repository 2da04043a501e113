import { readdir, readFile, stat } from 'node:fs/promises';
import { SandboxError, showPath } from './paths.js';

/** The file tools' reads and writes on the host: Node's errors (which name host paths) become model-facing SandboxErrors. */

/** Files bigger than this are refused by read_file and str_replace; bash (head, sed) can read parts. */
const MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Entries ls returns at most. */
const MAX_LS_ENTRIES = 500;

const FS_ERRORS: Record<string, string> = {
  ENOENT: 'does not exist',
  ENOTDIR: 'has a parent that is not a directory',
  EISDIR: 'is a directory',
  EACCES: 'is not accessible (permission denied)',
  EPERM: 'is not accessible (operation not permitted)',
  ENOSPC: 'cannot be written: no space left',
};

/** Runs a file-system step, turning Node's errors (which name host paths) into SandboxErrors. */
export async function fsStep<T>(virtualPath: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const reason = code === undefined ? undefined : FS_ERRORS[code];
    throw new SandboxError(`${showPath(virtualPath)} ${reason ?? `could not be accessed (${code ?? 'unknown error'})`}`, {
      cause: error,
    });
  }
}

export function statOrExplain(hostPath: string, virtualPath: string) {
  return fsStep(virtualPath, () => stat(hostPath));
}

export async function readTextFile(hostPath: string, virtualPath: string): Promise<string> {
  const shown = showPath(virtualPath);
  const info = await statOrExplain(hostPath, virtualPath);
  if (info.isDirectory()) throw new SandboxError(`${shown} is a directory; use ls`);
  if (info.size > MAX_FILE_BYTES) {
    throw new SandboxError(`${shown} is too large (${info.size} bytes); use bash (head, sed -n) to read parts`);
  }
  const bytes = await fsStep(virtualPath, () => readFile(hostPath));
  if (bytes.includes(0)) throw new SandboxError(`${shown} is a binary file (${bytes.length} bytes)`);
  return bytes.toString('utf8');
}

/** Lines of a two-level tree under `hostDir`, named by virtual path; directories end in `/`. */
export async function listTree(hostDir: string, virtualDir: string): Promise<string[]> {
  const lines: string[] = [];
  const walk = async (host: string, virtual: string, depth: number): Promise<void> => {
    const entries = await fsStep(virtual, () => readdir(host, { withFileTypes: true }));
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (lines.length >= MAX_LS_ENTRIES) return;
      const child = `${virtual === '/' ? '' : virtual}/${entry.name}`;
      const isDir = entry.isDirectory(); // Symlinks are listed, never followed.
      lines.push(`${'  '.repeat(depth)}${child}${isDir ? '/' : ''}`);
      if (isDir && depth < 1) await walk(`${host}/${entry.name}`, child, depth + 1);
    }
  };
  await walk(hostDir, virtualDir, 0);
  if (lines.length >= MAX_LS_ENTRIES) lines.push(`[... listing stopped at ${MAX_LS_ENTRIES} entries ...]`);
  return lines;
}
