/**
 * GitHub webhook memory under hostile load (issue #13): the real server process (the GitHub
 * channel as `npm start` runs it, see `serve ours` in ./github.ts) gets 48 concurrent posts at
 * once, and its resident memory is read from `/proc/<pid>/status` before and after (`VmRSS`, and
 * `VmHWM`, the peak). Three loads, each on a fresh server:
 *
 * - baseline: 48 signed small deliveries (a real `issues` payload);
 * - attack: 48 unsigned 24.9 MB posts, each sent whole by its client;
 * - worst case: 48 posts of 24.9 MB under a well-formed but wrong signature (these must be read
 *   to be refused; the large-body slots bound how many at once).
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Webhooks } from '@octokit/webhooks';
import { ROOT, startProcess, stopProcess } from './server-process.js';

const PATH = '/api/webhooks/github';
/** The same secret `serve ours` configures. */
const SECRET = 'bench-webhook-secret';
const CONCURRENT = 48;
const LARGE_BYTES = Math.floor(24.9 * 1024 * 1024);

interface Memory {
  rssMiB: number;
  peakMiB: number;
}

/** VmRSS and VmHWM of a process, in MiB. */
function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

/** Resolves with the status, or the transport error's code when the server closed first. */
function post(port: number, headers: Record<string, string>, body: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: PATH,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length), 'x-github-delivery': randomUUID() },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
        res.on('error', () => resolve(String(res.statusCode)));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    req.end(body);
  });
}

interface Scenario {
  name: string;
  headers: Record<string, string>;
  body: Buffer;
}

async function measure(scenario: Scenario): Promise<{ before: Memory; after: Memory; outcomes: Map<string, number> }> {
  let port = 0;
  const server: ChildProcess = await startProcess([join(ROOT, 'test/bench/github.ts'), 'serve', 'ours'], (line) => {
    const match = /^listening (\d+)$/.exec(line);
    if (match) port = Number(match[1]);
    return match !== null;
  });
  try {
    const pid = server.pid as number;
    const before = memoryOf(pid);
    const outcomes = new Map<string, number>();
    const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => post(port, scenario.headers, scenario.body)));
    for (const answer of answers) outcomes.set(answer, (outcomes.get(answer) ?? 0) + 1);
    return { before, after: memoryOf(pid), outcomes };
  } finally {
    await stopProcess(server);
  }
}

export async function runWebhookMemoryBench(): Promise<void> {
  const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: unknown[] }[];
  const small = Buffer.from(JSON.stringify(examples.find((group) => group.name === 'issues')?.examples[0] ?? {}));
  const signer = new Webhooks({ secret: SECRET });
  const large = Buffer.alloc(LARGE_BYTES, 0x20);
  const scenarios: Scenario[] = [
    { name: `signed ${(small.length / 1024).toFixed(1)} KiB (baseline)`, headers: { 'x-github-event': 'issues', 'x-hub-signature-256': await signer.sign(small.toString()) }, body: small },
    { name: 'unsigned 24.9 MB', headers: { 'x-github-event': 'issues' }, body: large },
    { name: '24.9 MB, wrong signature', headers: { 'x-github-event': 'issues', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }, body: large },
  ];
  console.log(`\ngithub webhook memory: ${CONCURRENT} concurrent posts to the real server process, VmRSS / VmHWM (peak) from /proc`);
  console.log(`${'load'.padEnd(30)} ${'RSS before'.padStart(11)} ${'RSS after'.padStart(10)} ${'added'.padStart(8)} ${'peak before'.padStart(12)} ${'peak after'.padStart(11)}  answers`);
  for (const scenario of scenarios) {
    const { before, after, outcomes } = await measure(scenario);
    const answers = [...outcomes].map(([answer, count]) => `${count}× ${answer}`).join(', ');
    console.log(
      `${scenario.name.padEnd(30)} ${`${before.rssMiB.toFixed(0)} MiB`.padStart(11)} ${`${after.rssMiB.toFixed(0)} MiB`.padStart(10)} ${`${(after.rssMiB - before.rssMiB).toFixed(0)} MiB`.padStart(8)} ${`${before.peakMiB.toFixed(0)} MiB`.padStart(12)} ${`${after.peakMiB.toFixed(0)} MiB`.padStart(11)}  ${answers}`,
    );
  }
}
