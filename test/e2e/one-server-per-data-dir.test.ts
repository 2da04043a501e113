import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { channelStarted, runCli, runMainToExit, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

const ADMIN_TOKEN = 'operator-token-for-the-cli-test';

/** Issue #15: one embedded server per data dir, and channels only once the port is bound. */
describe('one embedded server per data dir', () => {
  let telegram: FakeTelegram;
  let config: { path: string; dir: string };
  let first: ServerProcess | undefined;

  beforeAll(async () => {
    telegram = new FakeTelegram();
    await telegram.start();
    config = writeConfig(`server: { port: 0 }
auth: { admin_token: ${ADMIN_TOKEN} }
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

  it('the CLI acts through the running server instead, with the operator token', async () => {
    const url = ['--url', first?.url as string];
    const created = await runCli(['--config', config.path, ...url, 'user', 'create', 'ana'], config.dir);
    expect(created).toMatchObject({ code: 0, stdout: expect.stringMatching(/^created user ana \([0-9a-f-]{36}\)\napi key \(shown once, store it now\): dfc_\S+\n$/) });
    expect((await runCli(['--config', config.path, ...url, 'user', 'grant-shell', 'ana'], config.dir)).stdout).toMatch(/^ana \([0-9a-f-]{36}\): shell granted\n$/);
    expect((await runCli(['--config', config.path, ...url, 'user', 'list'], config.dir)).stdout).toMatch(/\tana\tshell: granted\t/);
    // A config without the operator token (same data dir: the same working folder) is told what is missing.
    const withoutToken = writeConfig('server: { port: 0 }\n');
    const refused = await runCli(['--config', withoutToken.path, ...url, 'user', 'list'], config.dir);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining('set auth.admin_token') });
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
