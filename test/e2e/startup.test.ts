import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeDingTalk } from '../fakes/dingtalk/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { runMainToExit, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

describe('starting the server', () => {
  let server: ServerProcess | undefined;
  const fakes: { stop(): Promise<void> }[] = [];
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    await Promise.all(fakes.splice(0).map((f) => f.stop()));
  });

  it('runs with no config file at all, on the embedded default, and says what is missing', async () => {
    server = await startServerProcess(['--config', writeConfig('server: { port: 0 }\n').path]);
    const response = await fetch(`${server.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ok: true,
      database: { ok: true, kind: 'pglite' },
      bus: { ok: true, kind: 'in-process' },
      channels: {},
      model: { configured: false, models: [] },
      // sandbox.isolation: auto, on a machine with bubblewrap (CI installs it).
      sandbox: { isolation: 'bubblewrap', isExplicit: false },
    });
    expect(await server.stop()).toBe(0);
  });

  it('exits non-zero naming the key path when the config is invalid', async () => {
    const { path } = writeConfig('server:\n  port: eighty\nchannels:\n  max_concurrency: 0\n');
    const { code, stderr } = await runMainToExit(['--config', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('server.port:');
    expect(stderr).toContain('channels.max_concurrency:');
  });

  it('prints its usage for --help and its version for --version, and exits 0 without starting', async () => {
    const help = await runMainToExit(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: npm start');
    expect(help.stdout).toContain('--config <path>');
    const version = await runMainToExit(['--version']);
    expect(version.code).toBe(0);
    const { version: expected } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(version.stdout.trim()).toBe(`deerflow-channels ${expected}`);
  });

  it('refuses an unknown option with its usage, exit code 2', async () => {
    const { code, stderr } = await runMainToExit(['--verbose']);
    expect(code).toBe(2);
    expect(stderr).toContain("Unknown option '--verbose'");
    expect(stderr).toContain('usage: npm start');
  });

  it('reports a config error before it opens the database: the data dir is never made', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'dfc-never-')), 'data');
    const { path } = writeConfig(`data_dir: ${dataDir}\nserver: { port: eighty }\n`);
    const { code, stderr } = await runMainToExit(['--config', path]);
    expect(code).toBe(2);
    expect(stderr).toContain('server.port:');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('answers /health while a platform has not answered yet, and stops at once without waiting for it', async () => {
    // A Telegram API that accepts connections and never answers: getMe hangs.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    fakes.push({
      stop: () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          silent.close(() => resolve());
        }),
    });
    const { port } = silent.address() as AddressInfo;
    const { path } = writeConfig(
      `server: { port: 0 }\nchannels:\n  telegram: { enabled: true, bot_token: "123:silent", api_root: "http://127.0.0.1:${port}" }\n`,
    );
    server = await startServerProcess(['--config', path]);
    const response = await fetch(`${server.url}/health`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { channels: Record<string, unknown> }).channels.telegram).toEqual({ running: false, reason: 'starting' });
    expect(await server.stop()).toBe(0);
    // Stopping abandoned the start; it did not sit out getMe's 30 s deadline on the way down.
    expect(server.logs.filter((entry) => entry.msg === 'channel failed to start')).toEqual([]);
    const abandoned = server.logs.find((entry) => entry.msg === 'channel start abandoned: stopping' && entry.channel === 'telegram');
    expect(abandoned?.err).toMatchObject({ message: 'start abandoned: the channel is stopping' });
  });

  it('stays up and reports the channel not running when Telegram rejects the token', async () => {
    const telegram = new FakeTelegram({ rejectToken: true });
    await telegram.start();
    fakes.push(telegram);
    const { path } = writeConfig(
      `server: { port: 0 }\nchannels:\n  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }\n`,
    );
    server = await startServerProcess(['--config', path]);
    // The gateway listens while channels connect; the refusal comes a moment later.
    await server.waitForLog((entry) => entry.msg === 'channel failed to start' && entry.channel === 'telegram');
    const health = (await (await fetch(`${server.url}/health`)).json()) as { channels: Record<string, unknown> };
    expect(health.channels.telegram).toEqual({ running: false, reason: 'Telegram rejected the bot token (401 Unauthorized)' });
  });

  it('starts a channel by itself once a platform that was down at boot answers again', async () => {
    const dingtalk = new FakeDingTalk();
    await dingtalk.start();
    fakes.push(dingtalk);
    // DingTalk's gateway is down (HTTP 502) when the server boots, and back for the retry.
    dingtalk.failNext('/v1.0/gateway/connections/open', { kind: 'http', status: 502 });
    const { path } = writeConfig(
      `server: { port: 0 }\nchannels:\n  dingtalk: { enabled: true, client_id: "${dingtalk.clientId}", client_secret: "${dingtalk.clientSecret}", api_url: "${dingtalk.apiUrl}" }\n`,
    );
    server = await startServerProcess(['--config', path]);
    await server.waitForLog((entry) => entry.msg === 'channel failed to start' && entry.channel === 'dingtalk');
    const health = async () =>
      ((await (await fetch(`${server?.url}/health`)).json()) as { channels: Record<string, { running: boolean; reason?: string }> }).channels.dingtalk;
    expect(await health()).toMatchObject({ running: false, reason: expect.stringContaining('(retrying)') });
    await server.waitForLog((entry) => entry.msg === 'channel started' && entry.channel === 'dingtalk', 15_000);
    expect(await health()).toEqual({ running: true });
    // And it answers people (no model is configured here, so it says that).
    const sent = await dingtalk.sendUserMessage({ chat: 'private', userId: 'staffboot01', text: 'anyone home?' });
    await dingtalk.waitFor(() => dingtalk.botMessages(sent.chatId).some((m) => m.text !== '⏳ Working on it...'), 15_000);
  });

  it('keeps the bot token out of the logs', async () => {
    const telegram = new FakeTelegram({ rejectToken: true });
    await telegram.start();
    fakes.push(telegram);
    const { path } = writeConfig(
      `server: { port: 0 }\nlog: { level: debug }\nchannels:\n  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}" }\n`,
    );
    server = await startServerProcess(['--config', path]);
    await server.stop();
    const secret = telegram.token.split(':')[1] as string;
    expect(JSON.stringify(server.logs)).not.toContain(secret);
    expect(server.stderr()).not.toContain(secret);
  });
});
