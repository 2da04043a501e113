/**
 * Where the CPU time goes, by package: `npx tsx test/bench/profile-breakdown.ts <file.cpuprofile> [--top N] [--package NAME]`.
 * Reads a V8 CPU profile (`node --cpu-prof`) and sums each sample's self time into the package
 * whose code it was in: PGlite (its JS and its WASM), postgres-js, LangGraph, @langchain/core, the
 * OpenAI SDK (its SSE parsing separately), drizzle, pino, grammY, our code, Node's own, GC.
 * Time in Node's own code and natives (a file write, a crypto call, promise hooks) goes to the
 * nearest caller that belongs to a package, so PGlite's file I/O counts as PGlite; what has no
 * such caller (the event loop, module loading at start-up) stays "Node".
 * `--top N` also lists the N functions with the most self time; `--package NAME` lists the files
 * of one bucket instead of the buckets; `--skip-ms N` leaves out the first N ms of the profile (a
 * server's start-up, to read its steady state).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Package folder → bucket, matched on the path after the last `node_modules/`; first match wins. */
const PACKAGE_BUCKETS: [prefix: string, bucket: string][] = [
  ['@electric-sql/pglite', 'PGlite'],
  ['postgres/', 'postgres-js'],
  ['@langchain/langgraph-checkpoint', 'LangGraph (checkpoint)'],
  ['@langchain/langgraph', 'LangGraph'],
  ['@langchain/core', '@langchain/core'],
  ['@langchain/openai', '@langchain/openai'],
  ['openai/', 'OpenAI SDK'],
  ['drizzle-orm', 'drizzle'],
  ['pino', 'pino'],
  ['grammy', 'grammY'],
  ['@grammyjs', 'grammY'],
  ['fastify', 'Fastify'],
  ['zod', 'zod'],
  ['uuid', 'uuid'],
  ['tsx', 'tsx (loader)'],
];

const NODE = 'Node (no package caller: event loop, module loading)';

/** Files of the OpenAI SDK that read the SSE stream: its lines, events and chunks. */
const OPENAI_SSE = /openai\/(internal\/decoders|core\/streaming|streaming|_vendor\/partial-json)/;

function bucketOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return '(idle)';
  if (functionName === '(program)') return '(program: V8, not attributed)';
  if (url.startsWith('wasm://')) return 'PGlite';
  const at = url.lastIndexOf('node_modules/');
  if (at >= 0) {
    const path = url.slice(at + 'node_modules/'.length);
    if (OPENAI_SSE.test(url)) return 'OpenAI SDK (SSE parsing)';
    for (const [prefix, bucket] of PACKAGE_BUCKETS) if (path.startsWith(prefix)) return bucket;
    const parts = path.split('/');
    return `other: ${path.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  if (url.startsWith('node:') || url === '') return NODE;
  // `.build/` is the esbuild bundle `npm start` runs: our code alone, packages stay external.
  if (/\/(src|channels|\.build)\//.test(url)) return 'our code';
  if (/\/test\//.test(url)) return 'bench / test code';
  return `other: ${url}`;
}

/** Self ms per node id: each sample's time delta goes to the node it was taken in; samples in the first `skipMs` are left out. */
function selfTimes(profile: CpuProfile, skipMs: number): Map<number, number> {
  const self = new Map<number, number>();
  let elapsedMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    elapsedMs += ms;
    if (elapsedMs > skipMs) self.set(id, (self.get(id) ?? 0) + ms);
  });
  return self;
}

function printShares(title: string, totals: Map<string, number>, allMs: number): void {
  console.log(title);
  for (const [name, ms] of [...totals].sort((a, b) => b[1] - a[1])) {
    if (ms / allMs < 0.002) continue;
    console.log(`  ${name.padEnd(48)} ${ms.toFixed(0).padStart(8)} ms ${((ms / allMs) * 100).toFixed(1).padStart(6)} %`);
  }
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '0' }, package: { type: 'string' }, 'skip-ms': { type: 'string', default: '0' } } });
const file = positionals[0];
if (!file) {
  process.stderr.write('usage: profile-breakdown.ts <file.cpuprofile> [--top N] [--package NAME] [--skip-ms N]\n');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const self = selfTimes(profile, Number(values['skip-ms']));
const parents = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
/** The node's bucket, or for Node's own code its nearest caller's that has a package. */
function attributedBucket(id: number): string {
  const own = bucketOf((nodes.get(id) as ProfileNode).callFrame);
  if (own !== NODE) return own;
  for (let at = parents.get(id); at !== undefined; at = parents.get(at)) {
    const bucket = bucketOf((nodes.get(at) as ProfileNode).callFrame);
    if (bucket !== NODE && !bucket.startsWith('(')) return bucket;
  }
  return NODE;
}
const buckets = new Map<string, number>();
const files = new Map<string, number>();
const functions = new Map<string, number>();
let busyMs = 0;
for (const [id, ms] of self) {
  const frame = (nodes.get(id) as ProfileNode).callFrame;
  const bucket = attributedBucket(id);
  buckets.set(bucket, (buckets.get(bucket) ?? 0) + ms);
  if (bucket === '(idle)') continue;
  busyMs += ms;
  if (values.package === undefined || values.package === bucket) {
    const where = frame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|channels|test)\//, '$1/');
    files.set(where || '(native)', (files.get(where || '(native)') ?? 0) + ms);
    const name = `${frame.functionName || '(anonymous)'}  ${where}:${frame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
  }
}
buckets.delete('(idle)');
console.log(`${file}: ${busyMs.toFixed(0)} ms busy (idle left out)`);
if (values.package === undefined) printShares('self time by package', buckets, busyMs);
else printShares(`self time of ${values.package}, by file`, files, busyMs);
const top = Number(values.top);
if (top > 0) {
  console.log(`top ${top} functions by self time`);
  for (const [name, ms] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${ms.toFixed(0).padStart(7)} ms ${((ms / busyMs) * 100).toFixed(1).padStart(5)} %  ${name}`);
  }
}
