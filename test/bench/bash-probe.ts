/**
 * Times the project's `runBash` alone: `bash -c 'echo bench'` in a temporary workspace with the
 * sandbox environment, as the `bash` tool runs it, but outside the server. Run as its own process
 * by the tool benchmark, because spawning costs more the bigger the spawning process is (the
 * child starts as a copy of it): with `residentMiB` above this process's own size, touched
 * ballast grows it to about that size first.
 * Prints one line: `{"bash":{"latenciesMs":[…],"residentMiB":n,"mismatches":n}}`.
 * Usage: tsx test/bench/bash-probe.ts <count> <residentMiB>
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runBash } from '../../src/agent/sandbox/bash.js';
import { buildSandboxEnv } from '../../src/agent/sandbox/environment.js';

const [count = 0, targetMiB = 0] = process.argv.slice(2).map(Number);
if (!(count > 0)) throw new Error('usage: bash-probe.ts <count> <residentMiB>');

const MIB = 1024 * 1024;
const ballast: Buffer[] = [];
// Filled, not just allocated: untouched pages are not resident and cost a fork nothing.
while (process.memoryUsage.rss() / MIB < targetMiB) ballast.push(Buffer.alloc(32 * MIB, 1));

const workspace = mkdtempSync(join(tmpdir(), 'dfc-bench-bash-'));
const options = {
  cwd: workspace,
  timeoutMs: 10_000,
  maxOutputChars: 20_000,
  env: buildSandboxEnv({ baseEnv: process.env, homeDir: workspace, perCallEnv: {}, isIsolated: false }),
  pathMapping: [],
};

let mismatches = 0;
const latenciesMs: number[] = [];
for (let i = -5; i < count; i++) {
  // Five unrecorded runs first: the first spawns load bash and warm the page cache.
  const startedAt = performance.now();
  const result = await runBash('echo bench', options);
  const elapsedMs = performance.now() - startedAt;
  if (result.exitCode !== 0 || result.output.trim() !== 'bench') mismatches++;
  else if (i >= 0) latenciesMs.push(elapsedMs);
}
const residentMiB = Math.round(process.memoryUsage.rss() / MIB);
// Before the result line: the bench stops this process as soon as it has read it.
rmSync(workspace, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ bash: { latenciesMs, residentMiB, mismatches } })}\n`);
