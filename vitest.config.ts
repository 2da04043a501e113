import { defineConfig } from 'vitest/config';
import { loadScaledMs } from './test/helpers/load-scaled-timer.js';

/** What both projects below share. Not `extends: true`: that would run the root's global setup once per project as well. */
const perFile = {
  // The official checkpointer validation suite calls global describe/it/expect.
  globals: true,
  // Tests wait on readiness (a log line, what a fake saw), each wait with its own bound that
  // stretches with the load while it waits (test/helpers/load-scaled-timer.ts); these only end
  // a test or hook that hangs with no wait of its own to give up. Stretched by the load when the
  // run starts, and well above a server's start (two minutes on an idle machine, stretched too).
  testTimeout: loadScaledMs(180_000),
  hookTimeout: loadScaledMs(300_000),
  // Ends what a file started and did not stop, also when vitest ends the worker.
  setupFiles: ['test/setup/child-processes.ts'],
};

export default defineConfig({
  test: {
    // The final check (test/setup/leftover-processes.ts) waits a moment for dying processes and removes the run's temporary folder.
    teardownTimeout: 60_000,
    // Once per run: the bundle the servers and the CLI run from (test/setup/bundle.ts), then the
    // final check that fails the run when a process it started is still running at its end.
    globalSetup: ['test/setup/bundle.ts', 'test/setup/leftover-processes.ts'],
    // Three on two cores: the run waits as much as it computes (fakes' pacing, schedules that fire
    // every 2 s, servers starting), so two workers kept only ~1.3 cores busy; a fourth was slower
    // again (docs/benchmarks.md, "The test suite on three workers").
    maxWorkers: 3,
    projects: [
      {
        test: {
          ...perFile,
          name: 'in-process',
          include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/contract/**/*.test.ts'],
          // A worker imports LangChain, drizzle and PGlite once, not once per file, and keeps the
          // migrated PGlite template of test/helpers/database.ts: the unit tests alone went from 62 s
          // to 33 s. Files share a worker's module cache, so a file restores what it changes in the
          // process (env vars, timers, listeners).
          isolate: false,
        },
      },
      {
        // End-to-end files run the server in processes of its own and import little themselves;
        // each keeps a fresh module cache (shared, the Feishu chat's fake lost its answers after
        // other files had run in its worker).
        test: { ...perFile, name: 'e2e', include: ['test/e2e/**/*.test.ts'] },
      },
    ],
  },
});
