/**
 * Times the project's `runBash` alone: `bash -c 'echo bench'` in a temporary workspace with the
 * sandbox environment, as the `bash` tool runs it, but outside the server: unsandboxed
 * (`none`) or in bubblewrap (`bubblewrap`, mounts and user as the tool sets them up). Run as its own process
 * by the tool benchmark, because spawning costs more the bigger the spawning process is (the
 * child starts as a copy of it): with `residentMiB` above this process's own size, touched
 * ballast grows it to about that size first.
 * Prints one line: `{"bash":{"latenciesMs":[…],"residentMiB":n,"mismatches":n}}`.
 * Usage: tsx test/bench/bash-probe.ts <count> <residentMiB> [none|bubblewrap]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BashSandbox, runBash } from '../../src/agent/sandbox/bash.js';
import { bubblewrapArgs, probeBubblewrap, sandboxUserFor, systemLayout } from '../../src/agent/sandbox/bubblewrap.js';
import { buildSandboxEnv } from '../../src/agent/sandbox/environment.js';
import { SandboxPaths } from '../../src/agent/sandbox/paths.js';

const [count = 0, targetMiB = 0] = process.argv.slice(2, 4).map(Number);
const isolation = process.argv[4] ?? 'none';
if (!(count > 0) || (isolation !== 'none' && isolation !== 'bubblewrap')) {
  throw new Error('usage: bash-probe.ts <count> <residentMiB> [none|bubblewrap]');
}

const MIB = 1024 * 1024;
const ballast: Buffer[] = [];
// Filled, not just allocated: untouched pages are not resident and cost a fork nothing.
while (process.memoryUsage.rss() / MIB < targetMiB) ballast.push(Buffer.alloc(32 * MIB, 1));

const root = mkdtempSync(join(tmpdir(), 'dfc-bench-bash-'));
const user = sandboxUserFor(process.getuid?.());
const paths = new SandboxPaths({ dataDir: root, skillsDir: join(root, 'skills'), userId: 'bench', threadId: 'bench', owner: user });
await paths.ensure();
let sandbox: BashSandbox | undefined;
if (isolation === 'bubblewrap') {
  const probe = await probeBubblewrap({ searchPath: process.env.PATH, user });
  if (!probe.isAvailable) throw new Error(`bubblewrap is not usable: ${probe.reason}`);
  // Built once: the tool builds the same arguments per call, a few microseconds.
  sandbox = { bwrapPath: probe.bwrapPath, args: bubblewrapArgs({ mounts: await paths.mounts(), isNetworkEnabled: true, system: systemLayout(), user }) };
}
const options = {
  cwd: paths.workspaceDir,
  timeoutMs: 10_000,
  maxOutputChars: 20_000,
  env: buildSandboxEnv({ baseEnv: process.env, homeDir: paths.workspaceDir, perCallEnv: {}, isIsolated: sandbox !== undefined }),
  pathMapping: paths.mappings(),
  sandbox,
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
rmSync(root, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ bash: { latenciesMs, residentMiB, mismatches } })}\n`);
