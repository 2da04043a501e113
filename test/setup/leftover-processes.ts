/**
 * The run's final check (vitest `globalSetup`): names the run in the environment every process
 * of it inherits and gives it a temporary folder of its own (`TMPDIR`, where every test folder,
 * data directory and server working directory is made); when the run ends, every process still
 * carrying either is killed and the run FAILS, listing their command lines. Then the folder goes.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_RUN_VARIABLE } from '../helpers/child-processes.js';
import { findLeftoverProcesses, type LeftoverProcess } from '../helpers/leftover-processes.js';

/**
 * How long a process found at the end may still take to go: a worker's exit handler SIGKILLs
 * its children a moment before the worker is gone, and the kernel ends them asynchronously.
 * Nothing a test started on purpose is still running by then.
 */
const DYING_GRACE_MS = 2000;

async function leftoversAfterGrace(find: () => LeftoverProcess[]): Promise<LeftoverProcess[]> {
  const givesUpAt = performance.now() + DYING_GRACE_MS;
  let found = find();
  while (found.length > 0 && performance.now() < givesUpAt) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    found = find();
  }
  return found;
}

export default function setup(): () => Promise<void> {
  const runId = randomUUID();
  const temporaryDirectory = mkdtempSync(join(tmpdir(), 'dfc-test-run-'));
  process.env[TEST_RUN_VARIABLE] = runId;
  process.env.TMPDIR = temporaryDirectory;

  return async function teardown(): Promise<void> {
    const find = () => findLeftoverProcesses({ marker: `${TEST_RUN_VARIABLE}=${runId}`, temporaryDirectory, excludingChildrenOf: process.pid });
    const leftovers = await leftoversAfterGrace(find);
    for (const { pid } of leftovers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone by itself meanwhile.
      }
    }
    rmSync(temporaryDirectory, { recursive: true, force: true });
    if (leftovers.length === 0) return;
    console.error(
      `\nFAIL: ${leftovers.length} process(es) started by this test run were still running at its end (now killed):\n` +
        leftovers.map(({ pid, commandLine }) => `  ${pid}  ${commandLine}`).join('\n') +
        '\nA test started them and did not end them: track them (test/helpers/child-processes.ts) or stop them in its hooks.\n',
    );
    // Vitest reports but ignores an error thrown here; the exit code is what CI reads.
    process.exitCode = 1;
  };
}
