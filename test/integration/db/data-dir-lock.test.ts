import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_DIR_LOCK_FILE, DataDirInUseError, lockDataDir } from '../../../src/db/data-dir-lock.js';
import { trackChild } from '../../helpers/child-processes.js';

/** Which process holds a PGlite data dir (src/db/data-dir-lock.ts); the servers themselves are in test/e2e/one-server-per-data-dir.test.ts. */
describe('lockDataDir', () => {
  const freshDir = () => join(mkdtempSync(join(tmpdir(), 'dfc-lock-')), 'data');
  const writeHolder = (dir: string, holder: Record<string, unknown> | string) => {
    lockDataDir(dir).release(); // makes the folder
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), typeof holder === 'string' ? holder : JSON.stringify(holder));
  };
  const holderIn = (dir: string) => JSON.parse(readFileSync(join(dir, DATA_DIR_LOCK_FILE), 'utf8')) as { pid: number };

  /** The pid of a process that has exited. */
  const deadPid = async () => {
    const child = spawn(process.execPath, ['-e', '']);
    trackChild(child, 'a process that exits at once');
    await new Promise((resolve) => child.once('exit', resolve));
    return child.pid as number;
  };

  it('takes a free data dir, and gives it up on release', () => {
    const dir = freshDir();
    const lock = lockDataDir(dir);
    expect(holderIn(dir).pid).toBe(process.pid);
    lock.release();
    expect(existsSync(join(dir, DATA_DIR_LOCK_FILE))).toBe(false);
  });

  it('refuses a data dir a live process holds, naming it', () => {
    const dir = freshDir();
    // The process that started this test run is alive; its lock has no start time to compare.
    writeHolder(dir, { pid: process.ppid, command: 'main.mjs --config a.yaml', startedAt: '2026-12-03T08:00:00.000Z' });
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(dir)).toThrow(`is in use by another deerflow-channels process (pid ${process.ppid}, main.mjs --config a.yaml, since 2026-12-03T08:00:00.000Z)`);
    expect(holderIn(dir).pid).toBe(process.ppid);
  });

  it('takes over the lock of a process that died, of a reused pid, of this very pid, and an unreadable one', async () => {
    const stale = [
      { pid: await deadPid(), command: 'main.mjs', startedAt: '2026-12-03T08:00:00.000Z' },
      // Alive, but not the process that wrote the lock: its start time differs (Linux).
      ...(existsSync('/proc/self/stat') ? [{ pid: process.ppid, command: 'main.mjs', startedAt: '2026-12-03T08:00:00.000Z', processStart: 'another-boot:1' }] : []),
      // A previous run's lock in a new pid namespace (a container's pid 1 is pid 1 again).
      { pid: process.pid, command: 'main.mjs', startedAt: '2026-12-03T08:00:00.000Z' },
      '{"pid": ',
    ];
    for (const holder of stale) {
      const dir = freshDir();
      writeHolder(dir, holder);
      const lock = lockDataDir(dir);
      expect(holderIn(dir).pid).toBe(process.pid);
      lock.release();
    }
  });

  it('leaves a lock that is no longer its own on release', () => {
    const dir = freshDir();
    const lock = lockDataDir(dir);
    writeFileSync(join(dir, DATA_DIR_LOCK_FILE), JSON.stringify({ pid: process.ppid, command: 'main.mjs', startedAt: '2026-12-03T08:00:00.000Z' }));
    lock.release();
    expect(holderIn(dir).pid).toBe(process.ppid);
  });
});
