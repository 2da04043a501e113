import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { hasScaleOutServices, type ScaledOutDeployment, startScaledOutDeployment } from '../helpers/scaled-out-deployment.js';
import { channelStarted, type ServerProcess } from './server-process.js';

/**
 * The scaled-out shape: server processes on one PostgreSQL database and one Redis (`DATABASE_URL`
 * and `REDIS_URL`, set by `.ci/run`), talked to only as Telegram and its users do.
 */

describe.skipIf(!hasScaleOutServices)('scaled out on PostgreSQL and Redis', () => {
  let telegram: FakeTelegram;
  let deployment: ScaledOutDeployment;

  beforeAll(async () => {
    telegram = new FakeTelegram();
    deployment = await startScaledOutDeployment(
      telegram,
      () => `telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }`,
    );
  });
  afterAll(() => deployment?.stop());

  it('answers through the Redis queue, each message once, and holds the Telegram connection', async () => {
    const server = await deployment.startServer();
    // Alone, it takes the Telegram lease and polls; the next case counts on that.
    await server.waitForLog(channelStarted('telegram'));
    expect(server.logs.find((entry) => entry.msg === 'server listening')).toMatchObject({ database: 'postgres', bus: 'redis' });
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ ok: true, bus: { ok: true, kind: 'redis' } });
    const chats = [7001, 7002, 7003];
    const sent = chats.map((chatId) => telegram.sendUserMessage({ chatId, chatType: 'private', text: `hello from ${chatId}` }));
    for (const [i, chatId] of chats.entries()) {
      await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.replyTo === sent[i]?.message_id && m.text === `Echo: hello from ${chatId}`), 15_000);
    }
    expect(deployment.model.requests).toHaveLength(chats.length);
  });

  it('runs Telegram polling in one process while both answer; the other takes over when it stops', async () => {
    const [first] = deployment.servers as [ServerProcess];
    const second = await deployment.startServer();
    const health = async (server: ServerProcess) =>
      ((await (await fetch(`${server.url}/health`)).json()) as { channels: Record<string, unknown> }).channels.telegram;
    expect(await health(first)).toEqual({ running: true });
    expect(await health(second)).toEqual({ running: false, standby: true, reason: 'standby: another process runs the Telegram connection' });

    // Both processes' workers answer; every message exactly once.
    const requestsBefore = deployment.model.requests.length;
    const chats = Array.from({ length: 8 }, (_, i) => 7100 + i);
    const sent = chats.map((chatId) => telegram.sendUserMessage({ chatId, chatType: 'private', text: `both ${chatId}` }));
    for (const [i, chatId] of chats.entries()) {
      await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.replyTo === sent[i]?.message_id && m.text === `Echo: both ${chatId}`), 15_000);
    }
    expect(chats.map((chatId) => telegram.botMessages(chatId).length)).toEqual(chats.map(() => 1));
    expect(deployment.model.requests.length - requestsBefore).toBe(chats.length);

    // The polling process shuts down (and gives the lease up): the standby starts polling.
    await first.stop();
    await second.waitForLog(channelStarted('telegram'), 15_000);
    expect(await health(second)).toEqual({ running: true });
    const after = telegram.sendUserMessage({ chatId: 7200, chatType: 'private', text: 'still there?' });
    await telegram.waitFor(() => telegram.botMessages(7200).find((m) => m.replyTo === after.message_id && m.text === 'Echo: still there?'), 15_000);
  });

  it('answers a message whose process was killed mid-answer from another process, in the same reply', async () => {
    await deployment.startServer();
    const alive = deployment.servers.filter((server) => server.child.exitCode === null);
    expect(alive).toHaveLength(2);
    // The first attempt streams slowly, so the process can be killed in the middle of it.
    let attempts = 0;
    deployment.model.respond = () => (++attempts === 1 ? { chunks: Array.from({ length: 40 }, (_, i) => `slow${i} `), chunkDelayMs: 250 } : { text: 'Answered after the crash.' });
    const chatId = 7300;
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'please survive a crash' });
    const isThisMessage = (entry: Record<string, unknown>) => entry.msg === 'inbound accepted' && entry.messageId === String(question.message_id);
    // Whichever process's worker took it from the queue.
    const working = await Promise.any(
      alive.map(async (server) => {
        await server.waitForLog(isThisMessage, 15_000);
        return server;
      }),
    );
    await telegram.waitFor(() => telegram.botMessages(chatId).some((m) => m.text.startsWith('slow0')), 15_000);
    working.child.kill('SIGKILL');

    // The other process takes the message over (after the 6 s handover and the dead run's lease) and finishes the same reply.
    const final = await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.text === 'Answered after the crash.'), 60_000);
    expect(final.replyTo).toBe(question.message_id);
    expect(telegram.botMessages(chatId)).toHaveLength(1);
    expect(attempts).toBe(2);
  });
});
