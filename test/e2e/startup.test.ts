import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeDingTalk } from '../fakes/dingtalk/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { channelFailedToStart, channelStarted, runMainToExit, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/** DingTalk's stream gateway, which a DingTalk channel's start opens a connection through. */
const DINGTALK_GATEWAY = '/v1.0/gateway/connections/open';

describe('starting the server', () => {
  it('runs with no config file at all, on the embedded default, and says what is missing', async () => {
    const server = await startServerProcess(['--config', writeConfig('server: { port: 0 }\n').path]);
    const response = await fetch(`${server.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ok: true,
      database: { ok: true, kind: 'pglite' },
      bus: { ok: true, kind: 'in-process' },
      // The web chat runs on every server unless turned off: it needs no platform.
      channels: { web: { running: true } },
      model: { configured: false, models: [], checks: {} },
      runtime: { kind: 'embedded' },
      // sandbox.isolation: auto, on a machine with bubblewrap (CI installs it).
      sandbox: { isolation: 'bubblewrap', isExplicit: false },
      outbox: { pending: 0, dead: 0 },
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
    try {
      const { port } = silent.address() as AddressInfo;
      const { path } = writeConfig(
        `server: { port: 0 }\nchannels:\n  telegram: { enabled: true, bot_token: "123:silent", api_root: "http://127.0.0.1:${port}" }\n`,
      );
      const server = await startServerProcess(['--config', path]);
      const response = await fetch(`${server.url}/health`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { channels: Record<string, unknown> }).channels.telegram).toEqual({ running: false, reason: 'starting' });
      expect(await server.stop()).toBe(0);
      // Stopping abandoned the start; it did not sit out getMe's 30 s deadline on the way down.
      expect(server.logs.filter((entry) => entry.msg === 'channel failed to start')).toEqual([]);
      const abandoned = server.logs.find((entry) => entry.msg === 'channel start abandoned: stopping' && entry.channel === 'telegram');
      expect(abandoned?.err).toMatchObject({ message: 'start abandoned: the channel is stopping' });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

/**
 * One server for the cases where a platform misbehaves at boot: Telegram refuses the token for
 * good, DingTalk is down until a case brings it back. Each case looks only at its own channel.
 */
describe('starting the server while platforms misbehave', () => {
  let telegram: FakeTelegram;
  let dingtalk: FakeDingTalk;
  let server: ServerProcess;

  beforeAll(async () => {
    telegram = new FakeTelegram({ rejectToken: true });
    dingtalk = new FakeDingTalk();
    await Promise.all([telegram.start(), dingtalk.start()]);
    // Down (HTTP 502) from boot until the case that needs it back clears it.
    dingtalk.failNext(DINGTALK_GATEWAY, { kind: 'http', status: 502 }, 1000);
    const { path } = writeConfig(`server: { port: 0 }
log: { level: debug }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
  dingtalk: { enabled: true, client_id: "${dingtalk.clientId}", client_secret: "${dingtalk.clientSecret}", api_url: "${dingtalk.apiUrl}" }
`);
    server = await startServerProcess(['--config', path]);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([telegram?.stop(), dingtalk?.stop()]);
  });

  const channelHealth = async (name: string) =>
    ((await (await fetch(`${server.url}/health`)).json()) as { channels: Record<string, { running: boolean; reason?: string }> }).channels[name];

  it('stays up and reports the channel not running when Telegram rejects the token', async () => {
    await server.waitForLog(channelFailedToStart('telegram'));
    expect(await channelHealth('telegram')).toEqual({ running: false, reason: 'Telegram rejected the bot token (401 Unauthorized)' });
  });

  it('starts a channel by itself once a platform that was down at boot answers again', async () => {
    await server.waitForLog(channelFailedToStart('dingtalk'));
    expect(await channelHealth('dingtalk')).toMatchObject({ running: false, reason: expect.stringContaining('(retrying)') });
    dingtalk.clearFaults(DINGTALK_GATEWAY);
    // The retries back off from 5 s; the first one after the platform is back succeeds.
    await server.waitForLog(channelStarted('dingtalk'), 30_000);
    expect(await channelHealth('dingtalk')).toEqual({ running: true });
    // And it answers people (no model is configured here, so it says that).
    const sent = await dingtalk.sendUserMessage({ chat: 'private', userId: 'staffboot01', text: 'anyone home?' });
    await dingtalk.waitFor(() => dingtalk.botMessages(sent.chatId).some((m) => m.text !== '⏳ Working on it...'), 15_000);
  });

  // Last: it stops the server, so that every line the server will ever log is there.
  it('keeps the bot token out of the logs, at debug level', async () => {
    await server.waitForLog(channelFailedToStart('telegram'));
    expect(await server.stop()).toBe(0);
    const secret = telegram.token.split(':')[1] as string;
    expect(JSON.stringify(server.logs)).not.toContain(secret);
    expect(server.stderr()).not.toContain(secret);
  });
});
