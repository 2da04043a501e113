/**
 * Every process a test file starts is ended with that file, even when a test fails or times out
 * before it could stop it: spawn helpers `trackChild` what they start, and
 * `test/setup/child-processes.ts` ends what is still running after the file's own hooks and
 * when vitest ends the worker. What escapes even that (a grandchild, a process started without
 * a helper) is caught by the run's final check, `test/setup/leftover-processes.ts`, by the
 * marker below in its environment.
 */
import type { ChildProcess } from 'node:child_process';

/**
 * Names the test run in the environment of every process it starts; the final check finds
 * leftovers by it. The global setup sets it, vitest's workers inherit it, and so does every
 * process they start with the default environment.
 */
export const TEST_RUN_VARIABLE = 'DFC_TEST_RUN';

/**
 * `env` plus this run's marker, for children started with an environment of their own (the
 * server gets `PATH` and `HOME` only), which would otherwise drop it. Unchanged outside a run.
 */
export function withRunMarker(env: Record<string, string>): Record<string, string> {
  const runId = process.env[TEST_RUN_VARIABLE];
  return runId === undefined ? env : { ...env, [TEST_RUN_VARIABLE]: runId };
}

/**
 * Children of this worker still running, with what to call them in a report. On `globalThis`:
 * a worker that runs several files loads this module once per file, and its signal handlers,
 * installed once, must see every file's children.
 */
const RUNNING = Symbol.for('deerflow-channels.test.running-children');
const workerState = globalThis as { [RUNNING]?: Map<ChildProcess, string> };
workerState[RUNNING] ??= new Map();
const running = workerState[RUNNING];

/** Remembers `child` until it exits, so that {@link endTrackedChildren} can end it. Returns `child`. */
export function trackChild<T extends ChildProcess>(child: T, label: string = child.spawnargs.join(' ')): T {
  if (child.exitCode !== null || child.signalCode !== null) return child;
  running.set(child, label);
  child.once('exit', () => running.delete(child));
  return child;
}

/** The labels of the tracked children that are still running. */
export function trackedChildren(): string[] {
  return [...running.values()];
}

/**
 * SIGKILLs every tracked child still running and resolves once all have exited, with the labels
 * of those it ended. SIGKILL rather than SIGTERM: a child still running here was forgotten by a
 * failed test and owes nobody a graceful shutdown; a server's sandboxes go with it
 * (`--die-with-parent`).
 */
export async function endTrackedChildren(): Promise<string[]> {
  const ended = [...running];
  await Promise.all(
    ended.map(([child]) => {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      return exited;
    }),
  );
  return ended.map(([, label]) => label);
}

/** SIGKILLs every tracked child at once, without waiting: for signal handlers, which cannot wait. */
export function killTrackedChildrenNow(): void {
  for (const child of running.keys()) child.kill('SIGKILL');
}
