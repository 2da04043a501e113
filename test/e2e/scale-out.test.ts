import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastUserText } from '../fakes/openai/index.js';
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

  it('answers once when the process answering froze past the handover: it stands down, or the other finds the turn answered', async () => {
    // A killed process has a signal, not an exit code.
    const running = () => deployment.servers.filter((server) => server.child.exitCode === null && server.child.signalCode === null);
    while (running().length < 2) await deployment.startServer();
    const alive = running();
    const text = 'please answer through a freeze';
    const slowAnswer = Array.from({ length: 12 }, (_, i) => `part${i} `);
    const firstFinal = slowAnswer.join('');
    const takerFinal = 'Answered by the process that took over.';
    let asked = 0;
    deployment.model.respond = (request) => {
      if (lastUserText(request.messages) !== text) return { text: 'unrelated' };
      return ++asked === 1 ? { chunks: slowAnswer, chunkDelayMs: 250 } : { text: takerFinal };
    };
    const chatId = 7400;
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text });
    // Message ids count per chat: the chat tells this message from the cases' before.
    const isThisMessage = (what: string) => (entry: Record<string, unknown>) =>
      entry.msg === what && entry.chatId === String(chatId) && entry.messageId === String(question.message_id);
    const working = await Promise.any(
      alive.map(async (server) => {
        await server.waitForLog(isThisMessage('inbound accepted'), 15_000);
        return server;
      }),
    );
    const other = alive.find((server) => server !== working) as ServerProcess;
    await telegram.waitFor(() => telegram.botMessages(chatId).some((m) => m.text.startsWith('part0')), 15_000);
    // An event loop that stalls past the handover, as on an overloaded machine: the other process
    // takes the message over meanwhile, and the frozen one goes on where it was.
    working.child.kill('SIGSTOP');
    try {
      await other.waitForLog(isThisMessage('message taken over from a worker that died'), 60_000);
    } finally {
      working.child.kill('SIGCONT');
    }
    // Either the frozen process's run was taken over (it stands down, the other answers), or it
    // kept its run and answered (the other finds the turn finished and runs nothing).
    const outcome = await Promise.any([
      working.waitForLog(isThisMessage('turn taken over by another process; it answers'), 60_000).then(() => 'stood down'),
      other.waitForLog(isThisMessage('message taken over was answered by its first worker; not run again'), 60_000).then(() => 'answered first'),
    ]);
    const final = outcome === 'stood down' ? takerFinal : firstFinal;
    await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.text === final), 60_000);
    // A message after it, answered: whatever either process still had on its way has arrived by then.
    const probe = telegram.sendUserMessage({ chatId: 7401, chatType: 'private', text: 'anything else?' });
    await telegram.waitFor(() => telegram.botMessages(7401).find((m) => m.replyTo === probe.message_id && m.text === 'unrelated'), 30_000);
    expect(asked).toBe(outcome === 'stood down' ? 2 : 1);
    const [reply, ...more] = telegram.botMessages(chatId);
    expect(more).toEqual([]);
    expect(reply?.replyTo).toBe(question.message_id);
    // One final in the message's history, and it is the text shown at the end.
    expect(reply?.history.filter((shown) => shown === firstFinal || shown === takerFinal)).toEqual([final]);
    expect(reply?.text).toBe(final);
  });
});
