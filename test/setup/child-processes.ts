/**
 * Runs in every test file (vitest `setupFiles`): ends the processes the file started and did not
 * stop, after the file's own hooks, and when vitest ends the worker early. Vitest ends a worker
 * with SIGTERM, which skips `exit` handlers, so a child kept only by `process.once('exit')`
 * outlived every file that failed before stopping it.
 */
import { afterAll } from 'vitest';
import { endTrackedChildren, killTrackedChildrenNow } from '../helpers/child-processes.js';

// Registered before the file's own hooks, so it runs after them (vitest runs after-hooks in
// reverse order): a file that stops its servers gracefully still does.
afterAll(async () => {
  await endTrackedChildren();
});

// Once per worker process, however many files it runs.
const INSTALLED = Symbol.for('deerflow-channels.test.child-process-handlers');
const state = globalThis as { [INSTALLED]?: true };
if (!state[INSTALLED]) {
  state[INSTALLED] = true;
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killTrackedChildrenNow();
      // Then die of the signal as if nobody had listened, so vitest sees the worker end as it expects.
      process.off(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
  process.once('exit', killTrackedChildrenNow);
}
