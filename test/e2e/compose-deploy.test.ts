import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { platforms } from '../../channels/index.js';
import { loadConfig } from '../../src/config/index.js';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { createTestDatabaseUrl } from '../helpers/database.js';
import { deleteRedisKeys } from '../helpers/redis-keys.js';
import { channelStarted, runToExit, type ServerProcess, startServerProcess } from './server-process.js';

/**
 * The deployment of docker-compose.yml, without Docker (this machine has no engine): the compiled
 * server built as the Dockerfile builds it, laid out as its last stage copies it, started with
 * its CMD and exactly the environment the compose file gives the server service, read with
 * `docker-compose config` from a .env a user would write. Only what cannot exist here is
 * substituted: the service host names `postgres` and `redis` (this test's databases), the port
 * (another may hold 8001), the volume (its own folder) and the Redis key prefix (a shared Redis).
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const databaseUrl = process.env.DATABASE_URL || undefined;
const redisUrl = process.env.REDIS_URL || undefined;
const ADMIN_TOKEN = `operator-${randomUUID()}`;
const MODEL_KEY = 'sk-compose';

interface DockerfileStage {
  from: string;
  workdir: string;
  env: Record<string, string>;
  copies: { from: string | undefined; source: string; destination: string }[];
  user: string | undefined;
  volumes: string[];
  runs: string[];
  healthcheck: string[];
  cmd: string[];
}

/**
 * The last stage of the Dockerfile, for the instructions this one uses: exec-form (JSON) CMD,
 * HEALTHCHECK and VOLUME, `ENV a=b c=d`, `COPY [--from=stage] source destination`.
 */
function readFinalStage(text: string): DockerfileStage {
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const lastFrom = instructions.findLastIndex((line) => /^FROM\s/i.test(line));
  const stage: DockerfileStage = { from: '', workdir: '/', env: {}, copies: [], user: undefined, volumes: [], runs: [], healthcheck: [], cmd: [] };
  for (const line of instructions.slice(lastFrom)) {
    const [, keyword = '', rest = ''] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
    switch (keyword.toUpperCase()) {
      case 'FROM':
        stage.from = rest;
        break;
      case 'WORKDIR':
        stage.workdir = rest;
        break;
      case 'ENV':
        for (const pair of rest.split(/\s+/)) {
          const [name, value] = pair.split('=', 2) as [string, string];
          stage.env[name] = value;
        }
        break;
      case 'COPY': {
        const words = rest.split(/\s+/);
        const from = words[0]?.startsWith('--from=') ? words.shift()?.slice('--from='.length) : undefined;
        stage.copies.push({ from, source: words[0] as string, destination: words[1] as string });
        break;
      }
      case 'USER':
        stage.user = rest;
        break;
      case 'VOLUME':
        stage.volumes = JSON.parse(rest) as string[];
        break;
      case 'RUN':
        stage.runs.push(rest);
        break;
      case 'HEALTHCHECK':
        stage.healthcheck = JSON.parse(rest.slice(rest.indexOf('CMD ') + 'CMD '.length)) as string[];
        break;
      case 'CMD':
        stage.cmd = JSON.parse(rest) as string[];
        break;
    }
  }
  return stage;
}

const image = readFinalStage(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));

describe('the image the Dockerfile makes', () => {
  it('runs the compiled server as an unprivileged user, with the sandbox and gh installed, its data on the volume', () => {
    expect(image.from).toBe('node:20-bookworm-slim');
    expect(image.cmd).toEqual(['node', 'dist/src/main.js']);
    expect(image.user).toBeDefined();
    expect(['root', '0']).not.toContain(image.user?.split(':')[0]);
    const installs = image.runs.join(' ');
    expect(installs).toMatch(/apt-get install .*\bbubblewrap\b/);
    expect(installs).toMatch(/apt-get install .*\bgh\b/);
    // The configuration it runs keeps every file the server writes on the volume.
    const { config } = loadConfig({ path: join(ROOT, 'deploy/config.yaml'), env: {}, platforms });
    expect(image.volumes).toEqual([config.data_dir]);
    expect(image.env.DEERFLOW_CONFIG).toBe(`${image.workdir}/deploy/config.yaml`);
  });
});

describe.skipIf(!databaseUrl || !redisUrl)('docker-compose.yml, run without Docker on PostgreSQL and Redis', () => {
  let telegram: FakeTelegram;
  let model: FakeOpenAI;
  let database: { url: string; drop: () => Promise<void> };
  let app: string;
  let serverEnv: Record<string, string>;
  let server: ServerProcess | undefined;
  const keyPrefix = `compose-${randomUUID().slice(0, 8)}`;

  /** The `.env` beside docker-compose.yml that a user writes (docs/deploy.md). */
  const userSettings = () => ({
    DEERFLOW_ADMIN_TOKEN: ADMIN_TOKEN,
    OPENAI_API_KEY: MODEL_KEY,
    OPENAI_BASE_URL: model.baseURL,
    OPENAI_MODEL: 'compose-model',
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.apiRoot,
  });

  /**
   * `/app` as the last stage's COPY lines make it: the build stage's dist/ is `npm run build` into
   * its place, the rest of the build stage's /app is the checkout (node_modules linked), and files
   * from the build context are copied.
   */
  async function layOutImage(work: string): Promise<string> {
    const appDir = join(work, 'app');
    for (const { from, source, destination } of image.copies) {
      const target = join(appDir, destination);
      mkdirSync(dirname(target), { recursive: true });
      if (from === undefined) {
        cpSync(join(ROOT, source), target, { recursive: true });
      } else if (relative(image.workdir, source) === 'dist') {
        const built = await runToExit('npm', ['run', '--silent', 'build', '--', '--out-dir', target], {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
        });
        if (built.code !== 0) throw new Error(`npm run build failed (${built.code}):\n${built.stdout}\n${built.stderr}`);
      } else {
        symlinkSync(join(ROOT, relative(image.workdir, source)), target);
      }
    }
    return appDir;
  }

  /** `docker-compose config`'s environment of the server service, with the user's .env and nothing else of this machine's. */
  async function composeServerEnvironment(work: string): Promise<{ environment: Record<string, string>; build: unknown }> {
    const envFile = join(work, '.env');
    writeFileSync(envFile, Object.entries(userSettings()).map(([name, value]) => `${name}=${value}\n`).join(''));
    const composed = await runToExit('docker-compose', ['--env-file', envFile, '-f', join(ROOT, 'docker-compose.yml'), 'config'], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    if (composed.code !== 0) throw new Error(`docker-compose config failed (${composed.code}):\n${composed.stderr}`);
    const service = (parseYaml(composed.stdout) as { services: Record<string, { environment: Record<string, string>; build: unknown }> }).services.server;
    if (service === undefined) throw new Error('docker-compose.yml has no server service');
    return service;
  }

  /** The service URL with its compose host name, replaced by this machine's server of the same kind. */
  function onThisMachine(url: string | undefined, serviceHost: string, local: string): string {
    expect(new URL(url ?? '').hostname).toBe(serviceHost);
    return local;
  }

  beforeAll(async () => {
    telegram = new FakeTelegram();
    model = new FakeOpenAI({ apiKey: MODEL_KEY });
    await Promise.all([telegram.start(), model.start()]);
    database = await createTestDatabaseUrl();
    const work = mkdtempSync(join(tmpdir(), 'dfc-compose-'));
    const [appDir, service] = await Promise.all([layOutImage(work), composeServerEnvironment(work)]);
    app = appDir;
    // The server service is the image of the Dockerfile beside the compose file.
    expect(service.build).toMatchObject({ context: ROOT.replace(/\/$/, '') });
    // The image's paths, under its WORKDIR, are under `app` here.
    const imageEnv = Object.fromEntries(
      Object.entries(image.env).map(([name, value]) => [name, value.startsWith(`${image.workdir}/`) ? join(app, relative(image.workdir, value)) : value]),
    );
    serverEnv = {
      ...imageEnv,
      ...service.environment,
      DATABASE_URL: onThisMachine(service.environment.DATABASE_URL, 'postgres', database.url),
      REDIS_URL: onThisMachine(service.environment.REDIS_URL, 'redis', redisUrl as string),
      DEERFLOW_PORT: '0',
      DEERFLOW_DATA_DIR: mkdtempSync(join(tmpdir(), 'dfc-compose-volume-')),
      DEERFLOW_REDIS_KEY_PREFIX: keyPrefix,
    };
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([telegram?.stop(), model?.stop()]);
    await database?.drop();
    await deleteRedisKeys(redisUrl as string, keyPrefix);
  });

  it('starts from its CMD on PostgreSQL and Redis, listening on every interface, with the model and the platform of the .env', async () => {
    server = await startServerProcess([], { cwd: app, script: image.cmd[1] as string, env: serverEnv });
    // Unset platforms are off: of the six, only Telegram's token is in the .env.
    const listening = server.logs.find((entry) => entry.msg === 'server listening') ?? {};
    expect(listening).toMatchObject({ database: 'postgres', bus: 'redis', models: 1 });
    expect([...(listening.channels as string[])].sort()).toEqual(['telegram', 'web']);
    // 127.0.0.2 is loopback too, but a server bound to 127.0.0.1 alone refuses it.
    const port = new URL(server.url).port;
    const health = await fetch(`http://127.0.0.2:${port}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      ok: true,
      database: { kind: 'postgres' },
      bus: { kind: 'redis' },
      model: { configured: true, models: ['default'] },
    });
    await server.waitForLog(channelStarted('telegram'));
  });

  it('answers a Telegram message through the model at OPENAI_BASE_URL with OPENAI_API_KEY', async () => {
    const sent = telegram.sendUserMessage({ chatId: 8101, chatType: 'private', text: 'hello from compose' });
    await telegram.waitFor(() => telegram.botMessages(8101).find((m) => m.replyTo === sent.message_id && m.text === 'Echo: hello from compose'), 15_000);
    expect(model.requests.at(-1)?.model).toBe('compose-model');
  });

  it('serves the console, the web chat and the shipped skills from the compiled build, behind DEERFLOW_ADMIN_TOKEN', async () => {
    const url = (server as ServerProcess).url;
    for (const page of ['/', '/console.js', '/console.css', '/chat', '/chat.js', '/chat.css']) {
      expect({ page, status: (await fetch(`${url}${page}`)).status }).toEqual({ page, status: 200 });
    }
    expect((await fetch(`${url}/api/skills`)).status).toBe(401);
    const skills = await fetch(`${url}/api/skills`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(((await skills.json()) as { skills: { name: string }[] }).skills.map((skill) => skill.name)).toContain('data-analysis');
  });

  it('passes its HEALTHCHECK while it runs, and fails it once the server is gone', async () => {
    const running = server as ServerProcess;
    const [command, ...args] = image.healthcheck as [string, ...string[]];
    // The check runs beside the server in its container, with the container's environment.
    const probeEnv = { ...serverEnv, DEERFLOW_PORT: new URL(running.url).port, PATH: process.env.PATH ?? '' };
    const healthy = await runToExit(command, args, { cwd: app, env: probeEnv });
    expect(healthy.code).toBe(0);
    expect(JSON.parse(healthy.stdout)).toMatchObject({ ok: true });
    expect(await running.stop()).toBe(0);
    expect((await runToExit(command, args, { cwd: app, env: probeEnv })).code).toBe(1);
  });
});
