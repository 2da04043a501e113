/**
 * Start-up and idle memory, measured the way a user meets them: `npm start` (bundle, then the
 * server) with Telegram configured against the fake Bot API, on a fresh data dir and on a restart,
 * on PGlite and (with a database URL) on PostgreSQL; `--help`, `--version` and a config error.
 * The baselines run in the same run: a bare Node HTTP server (what any Node server pays to
 * start) and a bare grammY bot polling the same fake (what a Telegram bot pays to idle).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { ROOT } from './server-process.js';
import { residentMiB } from './stats.js';

export interface StartupBenchOptions {
  /** PostgreSQL URL; adds the PostgreSQL rows. */
  databaseUrl?: string | undefined;
  /** Starts of each kind; the median is printed. */
  repeats?: number;
}

/** How long a process idles after it answered before its resident memory is read. */
const SETTLE_MS = 3000;
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function spawnTracked(command: string, args: string[], cwd: string): ChildProcess {
  const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

/** Milliseconds from spawn until `command` exited; its exit code. */
async function timeToExit(command: string, args: string[]): Promise<{ ms: number; code: number | null }> {
  const startedAt = performance.now();
  const child = spawnTracked(command, args, ROOT);
  child.stdout?.resume();
  child.stderr?.resume();
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { ms: performance.now() - startedAt, code };
}

interface StartFigures {
  /** Spawn to the first 200 from the URL. */
  readyMs: number;
  rssMiB: number;
}

/**
 * Spawns in a process group of its own, waits for a stdout line that names the URL to poll,
 * polls it until 200, waits {@link SETTLE_MS}, reads the resident memory of the largest process
 * of the group (npm runs the server as a grandchild), then ends the whole group.
 */
async function timeToReady(command: string, args: string[], cwd: string, urlOf: (line: string) => string | undefined): Promise<StartFigures> {
  const startedAt = performance.now();
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let buffered = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          const found = urlOf(line);
          if (found !== undefined) resolve(found);
        }
      });
      child.on('exit', (code) => reject(new Error(`exited with ${code} before it was ready\n${stderr.slice(-2000)}`)));
    });
    child.stdout?.resume();
    for (;;) {
      const response = await fetch(url).catch(() => undefined);
      if (response?.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const readyMs = performance.now() - startedAt;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    return { readyMs, rssMiB: await groupResidentMiB(child.pid as number) };
  } finally {
    const exited = new Promise((resolve) => (child.exitCode === null ? child.on('exit', resolve) : resolve(undefined)));
    try {
      process.kill(-(child.pid as number), 'SIGTERM');
    } catch {
      // already gone
    }
    await exited;
    children.delete(child);
  }
}

/** The largest resident set among `pid` and its descendants: the server, not npm or sh around it. */
async function groupResidentMiB(pid: number): Promise<number> {
  const { readFile, readdir } = await import('node:fs/promises');
  const parents = new Map<number, number>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    parents.set(Number(name), ppid);
  }
  const family = [pid];
  for (let i = 0; i < family.length; i++) for (const [child, parent] of parents) if (parent === family[i]) family.push(child);
  const sizes = await Promise.all(family.map((member) => residentMiB(member).catch(() => 0)));
  return Math.max(...sizes);
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function repeat(times: number, run: () => Promise<StartFigures>): Promise<StartFigures> {
  const runs: StartFigures[] = [];
  for (let i = 0; i < times; i++) runs.push(await run());
  return { readyMs: median(runs.map((r) => r.readyMs)), rssMiB: median(runs.map((r) => r.rssMiB)) };
}

const listeningUrl = (line: string): string | undefined => {
  if (!line.includes('"server listening"')) return undefined;
  return `${(JSON.parse(line) as { url: string }).url}/health`;
};

export async function runStartupBench(options: StartupBenchOptions = {}): Promise<void> {
  const repeats = options.repeats ?? 3;
  const telegram = new FakeTelegram();
  await telegram.start();
  const work = mkdtempSync(join(tmpdir(), 'dfc-bench-startup-'));
  try {
    // The baselines.
    const bareHttpScript = `require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log('listening http://127.0.0.1:' + this.address().port + '/'); });`;
    const bareHttp = await repeat(repeats, () =>
      timeToReady(process.execPath, ['-e', bareHttpScript], work, (line) => (line.startsWith('listening ') ? line.slice(10) : undefined)),
    );
    const botScript = `import { Bot } from 'grammy';
      const bot = new Bot(${JSON.stringify(telegram.token)}, { client: { apiRoot: ${JSON.stringify(telegram.apiRoot)} } });
      bot.on('message:text', (ctx) => ctx.reply('ok'));
      await bot.init();
      const server = (await import('node:http')).createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', () => console.log('listening http://127.0.0.1:' + server.address().port + '/'));
      await bot.start({ timeout: 1 });`;
    const bareBot = await repeat(repeats, () =>
      timeToReady(process.execPath, ['--input-type=module', '-e', botScript], ROOT, (line) => (line.startsWith('listening ') ? line.slice(10) : undefined)),
    );

    const ours = async (database: string | undefined, fresh: boolean): Promise<StartFigures> => {
      const runs: StartFigures[] = [];
      const dir = mkdtempSync(join(work, 'server-'));
      const config = join(dir, 'config.yaml');
      writeFileSync(
        config,
        `server: { port: 0 }\ndata_dir: ${join(dir, 'data')}\n${database ? `database: { url: "${database}" }\n` : ''}` +
          `channels:\n  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }\n`,
      );
      // A restart needs the data dir to exist: one start makes it.
      if (!fresh) await timeToReady(NPM, ['start', '--silent', '--', '--config', config], ROOT, listeningUrl);
      for (let i = 0; i < repeats; i++) {
        if (fresh) rmSync(join(dir, 'data'), { recursive: true, force: true });
        runs.push(await timeToReady(NPM, ['start', '--silent', '--', '--config', config], ROOT, listeningUrl));
      }
      return { readyMs: median(runs.map((r) => r.readyMs)), rssMiB: median(runs.map((r) => r.rssMiB)) };
    };
    const rows: [string, StartFigures][] = [
      ['bare node http server', bareHttp],
      ['bare grammY bot', bareBot],
      ['ours, PGlite, fresh', await ours(undefined, true)],
      ['ours, PGlite, restart', await ours(undefined, false)],
    ];
    if (options.databaseUrl) rows.push(['ours, PostgreSQL', await ours(options.databaseUrl, false)]);

    const bad = join(work, 'bad.yaml');
    writeFileSync(bad, 'server: { port: eighty }\n');
    const exits: [string, { ms: number; code: number | null }][] = [
      ['bare node -e', await timeToExit(process.execPath, ['-e', '0'])],
      ['npm start -- --help', await timeToExit(NPM, ['start', '--silent', '--', '--help'])],
      ['npm start -- --version', await timeToExit(NPM, ['start', '--silent', '--', '--version'])],
      ['npm start, config error', await timeToExit(NPM, ['start', '--silent', '--', '--config', bad])],
    ];

    console.log(`\nstart-up and idle memory: npm start with Telegram (fake Bot API), median of ${repeats}; idle RSS ${SETTLE_MS / 1000} s after /health answered`);
    console.log(`${''.padEnd(28)}${'ready ms'.padStart(10)}${'RSS MiB'.padStart(10)}${'× http'.padStart(9)}${'RSS × bot'.padStart(11)}`);
    for (const [name, figures] of rows) {
      console.log(
        `${name.padEnd(28)}${figures.readyMs.toFixed(0).padStart(10)}${figures.rssMiB.toFixed(0).padStart(10)}` +
          `${(figures.readyMs / bareHttp.readyMs).toFixed(2).padStart(9)}${(figures.rssMiB / bareBot.rssMiB).toFixed(2).padStart(11)}`,
      );
    }
    const [, nodeExit] = exits[0] as [string, { ms: number }];
    console.log(`${''.padEnd(28)}${'exit ms'.padStart(10)}${'code'.padStart(10)}${'× node'.padStart(9)}`);
    for (const [name, { ms, code }] of exits) {
      console.log(`${name.padEnd(28)}${ms.toFixed(0).padStart(10)}${String(code).padStart(10)}${(ms / nodeExit.ms).toFixed(2).padStart(9)}`);
    }
  } finally {
    await telegram.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
