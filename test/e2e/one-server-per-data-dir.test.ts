import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { trackChild, withRunMarker } from '../helpers/child-processes.js';
import { channelStarted, runMainToExit, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The bundle `npm run cli` runs, built once per test run by test/setup/bundle.ts. */
const CLI_BUNDLE = join(ROOT, '.build/cli.mjs');

/** Issue #15: one embedded server per data dir, and channels only once the port is bound. */
describe('one embedded server per data dir', () => {
  let telegram: FakeTelegram;
  let config: { path: string; dir: string };
  let first: ServerProcess | undefined;

  beforeAll(async () => {
    telegram = new FakeTelegram();
    await telegram.start();
    config = writeConfig(`server: { port: 0 }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`);
    first = await startServerProcess(['--config', config.path], { cwd: config.dir });
    await first.waitForLog(channelStarted('telegram'));
  });
  afterAll(async () => {
    await first?.stop();
    await telegram?.stop();
  });

  it('a second npm start on the same data dir exits at once naming the first, without reaching Telegram', async () => {
    const startsBefore = telegram.callsTo('getMe').length;
    const { code, stderr } = await runMainToExit(['--config', config.path], { cwd: config.dir });
    expect(code).toBe(1);
    expect(stderr).toContain(`is in use by another deerflow-channels process (pid ${first?.child.pid}, main.mjs --config ${config.path}`);
    expect(telegram.callsTo('getMe')).toHaveLength(startsBefore);
    // The first one still answers its chats.
    telegram.sendUserMessage({ chatId: 7, chatType: 'private', text: '/help' });
    await telegram.waitFor(() => telegram.botMessages(7).some((message) => message.text.includes('/new')));
  });

  it('the CLI is refused on it too, and pointed at the running server', async () => {
    const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [CLI_BUNDLE, '--config', config.path, 'user', 'list'],
        { cwd: config.dir, env: withRunMarker({ PATH: process.env.PATH ?? '' }) },
        (error, _stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr }),
      );
      trackChild(child, 'cli user list');
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`is in use by another deerflow-channels process (pid ${first?.child.pid}`);
    expect(stderr).toContain('manage accounts through its API or console');
  });

  it('opens again once the server holding it was killed', async () => {
    const killed = first as ServerProcess;
    first = undefined;
    killed.child.kill('SIGKILL');
    await killed.stop();
    const again = await startServerProcess(['--config', config.path], { cwd: config.dir });
    try {
      expect((await fetch(`${again.url}/health`)).status).toBe(200);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  });
});

describe('a server that cannot bind its port', () => {
  let telegram: FakeTelegram;
  let taken: Server;

  beforeAll(async () => {
    telegram = new FakeTelegram();
    await telegram.start();
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => taken?.close(resolve));
    await telegram?.stop();
  });

  it('exits without ever starting its channels: no platform update is taken from the server that has the port', async () => {
    const port = (taken.address() as { port: number }).port;
    const config = writeConfig(`server: { port: ${port} }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`);
    const { code, stderr } = await runMainToExit(['--config', config.path], { cwd: config.dir });
    expect(code).toBe(1);
    expect(stderr).toContain('EADDRINUSE');
    expect(telegram.calls).toHaveLength(0);
  });
});
