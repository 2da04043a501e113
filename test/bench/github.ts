/**
 * GitHub webhook acks: our `POST /api/webhooks/github` (the real server with the GitHub channel
 * and a bound agent, on PGlite: signature, delivery claim, registry check and fan-out) against a bare
 * `@octokit/webhooks` `createNodeMiddleware` on Node `http`, verifying the same deliveries. Each
 * server runs in its own process (this file, started with `serve ours|bare`); the load comes from
 * the bench process over keep-alive connections.
 *
 * Deliveries are real payloads from `@octokit/webhooks-examples` (the six events we handle),
 * signed as GitHub signs them, each with a fresh `X-GitHub-Delivery`. Two loads per server: a
 * fixed rate (open loop: each request is sent at its scheduled time, and latency runs from that
 * time, so a server falling behind shows as latency), then saturation (a fixed number of requests
 * always in flight) for the highest rate it sustains.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createNodeMiddleware, Webhooks } from '@octokit/webhooks';
import { GITHUB_EVENTS } from '../../channels/github/bindings.js';
import type { ChannelDefinition } from '../../src/channel/types.js';
import { ROOT, startProcess, stopProcess } from './server-process.js';
import { formatRow, type LatencySummary, summarize } from './stats.js';

const PATH = '/api/webhooks/github';
const SECRET = 'bench-webhook-secret';
const WARM_UP = { perSecond: 100, seconds: 2 };
const FIXED = { perSecond: 200, seconds: 5 };
const SATURATION = { inFlight: 16, seconds: 2 };

export interface GitHubBenchOptions {
  /** Requests per second of the fixed-rate phase. */
  perSecond?: number;
}

/** One signed delivery body, reused with a fresh delivery id per request (the signature covers only the body). */
interface SignedBody {
  event: string;
  body: Buffer;
  signature: string;
}

async function signedBodies(): Promise<SignedBody[]> {
  const groups = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: unknown[] }[];
  const signer = new Webhooks({ secret: SECRET });
  const known = groups.filter((group) => (GITHUB_EVENTS as readonly string[]).includes(group.name));
  const pairs = known.flatMap((group) => group.examples.map((example) => ({ event: group.name, text: JSON.stringify(example) })));
  return Promise.all(pairs.map(async ({ event, text }) => ({ event, body: Buffer.from(text), signature: await signer.sign(text) })));
}

interface Load {
  latenciesMs: number[];
  /** Answers other than 200, or transport errors; left out of the latencies. */
  failures: number;
  wallMs: number;
}

class Client {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  private next = 0;

  constructor(
    private readonly port: number,
    private readonly bodies: SignedBody[],
  ) {}

  /** Resolves with the status once the whole answer is read; 0 on a transport error. */
  post(): Promise<number> {
    const delivery = this.bodies[this.next++ % this.bodies.length] as SignedBody;
    return new Promise((resolve) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: this.port,
          path: PATH,
          method: 'POST',
          agent: this.agent,
          headers: {
            'content-type': 'application/json',
            'content-length': delivery.body.length,
            'user-agent': 'GitHub-Hookshot/bench',
            'x-github-event': delivery.event,
            'x-github-delivery': randomUUID(),
            'x-hub-signature-256': delivery.signature,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', () => resolve(0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(delivery.body);
    });
  }

  /** Open loop: request i is sent at start + i / rate; its latency runs from that scheduled time. */
  async fixedRate(perSecond: number, seconds: number): Promise<Load> {
    const total = perSecond * seconds;
    const load: Load = { latenciesMs: [], failures: 0, wallMs: 0 };
    const pending: Promise<void>[] = [];
    const startedAt = performance.now();
    let sent = 0;
    while (sent < total) {
      const now = performance.now();
      while (sent < total && startedAt + (sent * 1000) / perSecond <= now) {
        const scheduledAt = startedAt + (sent * 1000) / perSecond;
        sent++;
        pending.push(this.post().then((status) => record(load, status, performance.now() - scheduledAt)));
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(pending);
    load.wallMs = performance.now() - startedAt;
    return load;
  }

  /** Closed loop: `inFlight` requests always outstanding, for `seconds`; the rate is what the server sustains. */
  async saturate(inFlight: number, seconds: number): Promise<Load> {
    const load: Load = { latenciesMs: [], failures: 0, wallMs: 0 };
    const startedAt = performance.now();
    const endAt = startedAt + seconds * 1000;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (performance.now() < endAt) {
          const sentAt = performance.now();
          record(load, await this.post(), performance.now() - sentAt);
        }
      }),
    );
    load.wallMs = performance.now() - startedAt;
    return load;
  }

  close(): void {
    this.agent.destroy();
  }
}

function record(load: Load, status: number, latencyMs: number): void {
  if (status === 200) load.latenciesMs.push(latencyMs);
  else load.failures++;
}

interface ServerFigures {
  fixed: LatencySummary;
  saturated: LatencySummary;
  failures: number;
}

async function measure(kind: 'ours' | 'bare', bodies: SignedBody[], perSecond: number): Promise<ServerFigures> {
  let port = 0;
  const server: ChildProcess = await startProcess([join(ROOT, 'test/bench/github.ts'), 'serve', kind], (line) => {
    const match = /^listening (\d+)$/.exec(line);
    if (match) port = Number(match[1]);
    return match !== null;
  });
  const client = new Client(port, bodies);
  try {
    await client.fixedRate(WARM_UP.perSecond, WARM_UP.seconds); // JIT, connections, the database's first pages
    const fixed = await client.fixedRate(perSecond, FIXED.seconds);
    const saturated = await client.saturate(SATURATION.inFlight, SATURATION.seconds);
    return {
      fixed: summarize(fixed.latenciesMs, fixed.wallMs),
      saturated: summarize(saturated.latenciesMs, saturated.wallMs),
      failures: fixed.failures + saturated.failures,
    };
  } finally {
    client.close();
    await stopProcess(server);
  }
}

export async function runGitHubBench(options: GitHubBenchOptions = {}): Promise<void> {
  const perSecond = options.perSecond ?? FIXED.perSecond;
  const bodies = await signedBodies();
  const meanKiB = bodies.reduce((sum, b) => sum + b.body.length, 0) / bodies.length / 1024;
  console.log(
    `\ngithub webhook acks: ${bodies.length} real signed payloads (${GITHUB_EVENTS.length} events, mean ${meanKiB.toFixed(1)} KiB), a fresh delivery id each, keep-alive`,
  );
  const ours = await measure('ours', bodies, perSecond);
  const bare = await measure('bare', bodies, perSecond);

  const ratio = (a: LatencySummary, b: LatencySummary) =>
    `${'ratio (ours / bare)'.padEnd(24)} ${(a.perSecond / b.perSecond).toFixed(2).padStart(9)} ${(a.p50Ms / b.p50Ms).toFixed(2).padStart(9)} ${(a.p99Ms / b.p99Ms).toFixed(2).padStart(9)}`;
  console.log(`${''.padEnd(24)} ${'acks/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
  console.log(`${perSecond}/s for ${FIXED.seconds} s (open loop; latency from the scheduled send)`);
  console.log(formatRow('  deerflow-channels', ours.fixed));
  console.log(formatRow('  bare @octokit/webhooks', bare.fixed));
  console.log(ratio(ours.fixed, bare.fixed));
  console.log(`saturated: ${SATURATION.inFlight} in flight for ${SATURATION.seconds} s (the highest sustained rate)`);
  console.log(formatRow('  deerflow-channels', ours.saturated));
  console.log(formatRow('  bare @octokit/webhooks', bare.saturated));
  console.log(ratio(ours.saturated, bare.saturated));
  console.log(`checked: ${ours.failures} non-200 answers from deerflow-channels, ${bare.failures} from the bare middleware (left out above)`);
}

/**
 * `serve ours`: the real server (`startServer`, as `npm start` runs it) with only the GitHub
 * channel, on PGlite in a temp folder, with one agent bound to every repository of the example
 * payloads for every event, mention required: each delivery is claimed in the database, the
 * registry is checked for changes and the fan-out decides, but no run starts (no example mentions
 * the agent), so the figures are the acknowledgement path alone.
 */
async function serveOurs(): Promise<number> {
  const [{ startServer }, { loadConfig }, { githubChannel }, { createLogger }] = await Promise.all([
    import('../../src/server.js'),
    import('../../src/config/index.js'),
    import('../../channels/github/index.js'),
    import('../../src/logger.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'dfc-bench-github-'));
  const groups = createRequire(import.meta.url)('@octokit/webhooks-examples') as { name: string; examples: unknown[] }[];
  const repos = [
    ...new Set(groups.flatMap((group) => group.examples.map((e) => (e as { repository?: { full_name?: string } }).repository?.full_name))),
  ].filter((repo): repo is string => typeof repo === 'string');
  const triggers = GITHUB_EVENTS.filter((event) => event !== 'ping').map((event) => `        ${event}: { require_mention: true }`);
  mkdirSync(join(dir, 'agents', 'watcher'), { recursive: true });
  writeFileSync(
    join(dir, 'agents', 'watcher', 'config.yaml'),
    `github:\n  bot_login: bench-watcher\n  bindings:\n${repos.map((repo) => `    - repo: ${repo}\n      triggers:\n${triggers.join('\n')}`).join('\n')}\n`,
  );
  writeFileSync(
    join(dir, 'config.yaml'),
    `server: { port: 0 }\ndata_dir: ${join(dir, 'data')}\nlog: { level: warn }\nagents: { dir: ${join(dir, 'agents')} }\nchannels:\n  github: { enabled: true, webhook_secret: "${SECRET}" }\n`,
  );
  const platforms = [githubChannel as ChannelDefinition];
  const { config } = loadConfig({ path: join(dir, 'config.yaml'), env: {}, platforms });
  const server = await startServer({ config, platforms, logger: createLogger({ level: 'warn' }) });
  process.once('SIGTERM', () => void server.stop().finally(() => process.exit(0)));
  return Number(new URL(server.url).port);
}

/** `serve bare`: `@octokit/webhooks` verifying and receiving the same deliveries, nothing else. */
async function serveBare(): Promise<number> {
  const webhooks = new Webhooks({ secret: SECRET });
  webhooks.onAny(() => {});
  const server = createServer(createNodeMiddleware(webhooks, { path: PATH }));
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

// Started as a server process by `measure`.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'serve') {
  const port = process.argv[3] === 'bare' ? await serveBare() : await serveOurs();
  process.stdout.write(`listening ${port}\n`);
}
