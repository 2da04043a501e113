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
