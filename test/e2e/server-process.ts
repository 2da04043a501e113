import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** tsx's loader by absolute URL, so the server can run from any working directory. */
const TSX_LOADER = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Working directory; a fresh temp folder keeps `./config.yaml` and `./.data` of the repo out. */
  cwd?: string;
}

export interface ServerProcess {
  /** `http://127.0.0.1:<port>` once listening. */
  url: string;
  /** Every JSON log line so far. */
  logs: Record<string, unknown>[];
  stderr: () => string;
  /**
   * Resolves with the first log line, already written or still to come, that `matches`; rejects
   * after `timeoutMs` (default 10000). For work the server does in the background, where no
   * chat message marks the end.
   */
  waitForLog(matches: (entry: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** SIGTERM, then wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  child: ChildProcess;
}

/** Writes `yaml` to a fresh folder (whose `.data` holds the database) and returns the file's path. */
export function writeConfig(yaml: string): { path: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dfc-e2e-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, yaml);
  return { path, dir };
}

function spawnMain(args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, join(ROOT, 'src/main.ts'), ...args], {
    cwd: options.cwd ?? mkdtempSync(join(tmpdir(), 'dfc-cwd-')),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Never leave a server polling a port that a later fake may reuse.
  process.once('exit', () => child.kill('SIGKILL'));
  return child;
}

/** Starts `src/main.ts` exactly as `npm start` does, and waits until it listens. */
export async function startServerProcess(args: string[], options: SpawnOptions = {}, timeoutMs = 30_000): Promise<ServerProcess> {
  const child = spawnMain(args, options);
  const logs: Record<string, unknown>[] = [];
  const logListeners = new Set<(entry: Record<string, unknown>) => void>();
  let stderr = '';
  let buffered = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A server that never listened is no use to the test, and must not outlive it.
      child.kill('SIGKILL');
      reject(new Error(`server did not listen within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          for (const listener of [...logListeners]) listener(entry);
          if (entry.msg === 'server listening') {
            clearTimeout(timer);
            resolve(String(entry.url));
          }
        } catch {
          // not a log line
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening\n${stderr}`));
    });
  });
  return {
    url,
    logs,
    stderr: () => stderr,
    waitForLog: (matches, timeoutMs = 10_000) => {
      const found = logs.find(matches);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const listener = (entry: Record<string, unknown>): void => {
          if (!matches(entry)) return;
          clearTimeout(timer);
          logListeners.delete(listener);
          resolve(entry);
        };
        const timer = setTimeout(() => {
          logListeners.delete(listener);
          reject(new Error(`no matching server log line within ${timeoutMs} ms`));
        }, timeoutMs);
        logListeners.add(listener);
      });
    },
    child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
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
