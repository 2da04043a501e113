import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { endTrackedChildren, TEST_RUN_VARIABLE, trackChild, trackedChildren } from '../../helpers/child-processes.js';
import { findLeftoverProcesses } from '../../helpers/leftover-processes.js';

/**
 * The run's final check can fail: processes left behind are found, by the run's marker or by
 * working in its temporary folder, and a vitest run whose test leaves some exits non-zero,
 * naming them, and ends them.
 */

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const FIXTURE_CONFIG = 'test/integration/harness/fixtures/leaves-children.config.ts';

/** Pids of running processes whose command line is exactly `commandLine`. */
function pidsRunning(commandLine: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const isZombie = stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
        return !isZombie && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ') === commandLine;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A `sleep` no other process runs, so its command line finds it. */
function uniqueSleepSeconds(): string {
  return `${900_000 + Math.floor(Math.random() * 99_999)}`;
}

describe.runIf(process.platform === 'linux')('the check for processes a test run left behind', () => {
  const started: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of started) child.kill('SIGKILL');
    await Promise.all(started.splice(0).map(exited));
  });

  it('finds a process carrying the run marker, or working in the run folder, and no other', async () => {
    const marker = `${TEST_RUN_VARIABLE}=${randomUUID()}`;
    const runFolder = mkdtempSync(join(tmpdir(), 'leftover-check-'));
    const [name, value] = marker.split('=') as [string, string];
    const marked = spawn('sleep', [uniqueSleepSeconds()], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '', [name]: value } });
    const inFolder = spawn('sleep', [uniqueSleepSeconds()], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '' }, cwd: runFolder });
    const unrelated = spawn('sleep', [uniqueSleepSeconds()], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '' }, cwd: tmpdir() });
    started.push(marked, inFolder, unrelated);
    await Promise.all(started.map((child) => new Promise((resolve) => child.once('spawn', resolve))));

    const found = findLeftoverProcesses({ marker, temporaryDirectory: runFolder, excludingChildrenOf: process.ppid });
    expect(found.map(({ pid }) => pid).sort()).toEqual([marked.pid, inFolder.pid].sort());
    expect(found.find(({ pid }) => pid === marked.pid)?.commandLine).toBe(marked.spawnargs.join(' '));

    marked.kill('SIGKILL');
    inFolder.kill('SIGKILL');
    await Promise.all([exited(marked), exited(inFolder)]);
    expect(findLeftoverProcesses({ marker, temporaryDirectory: runFolder, excludingChildrenOf: process.ppid })).toEqual([]);
  });

  it('ends tracked children that are still running, and says which', async () => {
    const child = trackChild(spawn('sleep', [uniqueSleepSeconds()], { stdio: 'ignore' }), 'a forgotten sleep');
    started.push(child);
    expect(trackedChildren()).toContain('a forgotten sleep');
    expect(await endTrackedChildren()).toContain('a forgotten sleep');
    expect(child.signalCode).toBe('SIGKILL');
    expect(trackedChildren()).not.toContain('a forgotten sleep');
  });

  /** Runs the fixture's vitest, as the suite's own run, and resolves once it exited. */
  function runFixture(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
    // Its own run: not this run's marker, which would make this run's check see its children.
    const { [TEST_RUN_VARIABLE]: _ours, ...inherited } = process.env;
    return new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', FIXTURE_CONFIG],
        { cwd: ROOT, env: { ...inherited, ...env } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, output: stdout + stderr }),
      );
      trackChild(child, 'vitest run of the leftover fixture');
    });
  }

  it('fails a vitest run whose test left processes running, names them, and ends them', async () => {
    const seconds = uniqueSleepSeconds();
    const { code, output } = await runFixture({ LEFTOVER_SECONDS: seconds });
    expect(output).toContain('1 passed');
    expect(code).toBe(1);
    expect(output).toContain('process(es) started by this test run were still running at its end');
    expect(output).toContain(`sleep ${seconds}1`);
    expect(output).toContain(`sleep ${seconds}2`);
    // The tracked one was ended with its file, before the check.
    expect(output).not.toContain(`sleep ${seconds}3`);
    for (const n of [1, 2, 3]) expect(pidsRunning(`sleep ${seconds}${n}`)).toEqual([]);
  });

  it('passes a vitest run that left nothing', async () => {
    const { code, output } = await runFixture({});
    expect(output).not.toContain('still running at its end');
    expect(code).toBe(0);
  });
});
