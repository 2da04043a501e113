import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { channelStarted, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Issue #15: more chats at once than the intake holds. Telegram's updates the intake refuses are
 * left unconfirmed, so Telegram offers them again until there is room: every message is answered,
 * none twice.
 */
describe('more messages at once than the intake holds', () => {
  let telegram: FakeTelegram;
  let model: FakeOpenAI;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    telegram = new FakeTelegram();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    // Slow enough that the queue fills: each answer takes 10 deltas 30 ms apart.
    model.respond = (request) => ({ chunks: Array.from({ length: 10 }, (_, i) => `${i} `).concat([`for ${lastUserText(request.messages)}`]), chunkDelayMs: 30 });
    await Promise.all([telegram.start(), model.start()]);
    const config = writeConfig(`server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  max_concurrency: 2
  inbound_queue_maxsize: 3
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`);
    server = await startServerProcess(['--config', config.path], { cwd: config.dir });
    await server.waitForLog(channelStarted('telegram'));
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([telegram?.stop(), model?.stop()]);
  });

  it('answers every one of 15 chats writing at once to an intake of 3, each once', async () => {
    const chats = Array.from({ length: 15 }, (_, i) => 8400 + i);
    const sent = chats.map((chatId) => telegram.sendUserMessage({ chatId, chatType: 'private', text: `hello ${chatId}` }));
    for (const [i, chatId] of chats.entries()) {
      const final = await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.text.endsWith(`for hello ${chatId}`)), 60_000);
      expect(final.replyTo).toBe(sent[i]?.message_id);
      expect(telegram.botMessages(chatId)).toHaveLength(1);
    }
    expect(model.requests).toHaveLength(chats.length);
    // The intake did refuse some: they were left with Telegram, which offered them again.
    expect(server?.logs.some((entry) => entry.msg === 'inbound message refused by the intake' && entry.handling === 'left for redelivery')).toBe(true);
  });
});
