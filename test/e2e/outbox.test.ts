import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { channelStarted, runCli, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Issue #15: a final the platform will not take now is not lost. Through the real server and the
 * fake Telegram: a 429 storm on edits, a chat that refuses the bot (a dead letter the operator
 * sees in /health, /metrics and the CLI, and sends again), and a restart while a final waits.
 * Dead letters by deadline are in test/integration/channel/outbox.test.ts.
 */

describe('replies the platform would not take at once', () => {
  let telegram: FakeTelegram;
  let model: FakeOpenAI;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    telegram = new FakeTelegram();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    // A streamed answer, slow enough that partials are edited in before the final.
    model.respond = (request) => {
      const question = lastUserText(request.messages);
      return { chunks: ['Answer to ', question, ' is here.'], chunkDelayMs: 150 };
    };
    await Promise.all([telegram.start(), model.start()]);
  });
  afterEach(async () => {
    telegram.clearFaults();
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    await Promise.all([telegram?.stop(), model?.stop()]);
  });

  const configWith = (channelsExtra = '') =>
    writeConfig(`server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
${channelsExtra}  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`);

  const start = async (config: { path: string; dir: string }): Promise<ServerProcess> => {
    server = await startServerProcess(['--config', config.path], { cwd: config.dir });
    await server.waitForLog(channelStarted('telegram'));
    return server;
  };

  const health = async (running: ServerProcess) => (await (await fetch(`${running.url}/health`)).json()) as { outbox?: { pending: number; dead: number } };

  /** The chat shows the answer, once, in one bot message (no stale placeholder or partial above it). */
  const expectAnsweredOnce = async (chatId: number, question: string): Promise<void> => {
    const answer = `Answer to ${question} is here.`;
    await telegram.waitFor(() => telegram.botMessages(chatId).some((m) => m.text === answer), 60_000);
    expect(telegram.botMessages(chatId).map((m) => m.text)).toEqual([answer]);
  };

  it('delivers every final through a 429 storm on edits, honouring retry_after, each once', async () => {
    const running = await start(configWith());
    const chats = Array.from({ length: 8 }, (_, i) => 9301 + i);
    // More 429s than a final's own five tries: several finals are kept and sent by the outbox.
    telegram.failNext('editMessageText', { errorCode: 429, retryAfter: 1 }, 64);
    for (const chatId of chats) telegram.sendUserMessage({ chatId, chatType: 'private', text: `storm ${chatId}` });
    for (const chatId of chats) await expectAnsweredOnce(chatId, `storm ${chatId}`);
    expect(telegram.rateLimitViolations).toEqual([]);
    await running.waitForLog((entry) => entry.msg === 'kept reply delivered');
    expect(await health(running)).toMatchObject({ outbox: { pending: 0, dead: 0 } });
  });

  it('makes a final the platform refuses a dead letter, shows it to the operator, and sends it again on retry', async () => {
    const config = configWith();
    const running = await start(config);
    const chatId = 9401;
    // The person blocked the bot (and unblocks it later): nothing reaches the chat meanwhile.
    const blocked = { errorCode: 403, description: 'Forbidden: bot was blocked by the user' } as const;
    telegram.failNext('sendMessage', blocked, 1000);
    telegram.failNext('editMessageText', blocked, 1000);
    telegram.sendUserMessage({ chatId, chatType: 'private', text: 'during the outage' });
    await running.waitForLog((entry) => entry.msg === 'reply refused by the platform; kept as a dead letter', 30_000);
    expect(await health(running)).toMatchObject({ outbox: { pending: 0, dead: 1 } });
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(metrics).toContain('deerflow_outbox_entries{state="dead"} 1');
    expect(metrics).toContain('deerflow_outbox_events_total{channel="telegram",event="dead"} 1');

    const url = ['--url', running.url];
    const listed = await runCli(['--config', config.path, ...url, 'outbox', 'list'], config.dir);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^outbox: 0 pending, 1 dead\n\d+\ttelegram\t9401\t\d+ chars\t1 attempts\tdead \S+\tCHANNEL_REJECTED: .*403: Forbidden: bot was blocked by the user/);
    // The operator sees where and why, never what was said.
    expect(listed.stdout).not.toContain('during the outage');

    telegram.clearFaults();
    expect(await runCli(['--config', config.path, ...url, 'outbox', 'retry', 'all'], config.dir)).toMatchObject({ code: 0, stdout: '1 dead letter sent again\n' });
    await expectAnsweredOnce(chatId, 'during the outage');
    await running.waitForLog((entry) => entry.msg === 'kept reply delivered');
    expect(await health(running)).toMatchObject({ outbox: { pending: 0, dead: 0 } });
    expect(await runCli(['--config', config.path, ...url, 'outbox', 'retry', 'nine'], config.dir)).toMatchObject({ code: 2 });
  });

  it('keeps a waiting final across a restart and delivers it once the platform is back', async () => {
    const config = configWith();
    const first = await start(config);
    const chatId = 9501;
    // Telegram asks for a long wait (past what a final waits in its turn): the final is kept for then.
    telegram.failNext('sendMessage', { errorCode: 429, retryAfter: 6 }, 2);
    telegram.sendUserMessage({ chatId, chatType: 'private', text: 'before the restart' });
    await first.waitForLog((entry) => entry.msg === 'reply not delivered; kept in the outbox', 30_000);
    await first.stop();
    server = undefined;
    expect(telegram.botMessages(chatId)).toEqual([]);

    const restarted = await start(config);
    await expectAnsweredOnce(chatId, 'before the restart');
    await restarted.waitForLog((entry) => entry.msg === 'kept reply delivered');
    expect(await health(restarted)).toMatchObject({ outbox: { pending: 0, dead: 0 } });
    // Answered from the outbox, not by running the message again.
    expect(model.requests.filter((request) => lastUserText(request.messages) === 'before the restart')).toHaveLength(1);
    expect(telegram.rateLimitViolations).toEqual([]);
  });
});
