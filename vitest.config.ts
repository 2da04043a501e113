import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The official checkpointer validation suite calls global describe/it/expect.
    globals: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers only add contention for PGlite's WASM start-up.
    maxWorkers: 2,
  },
});
