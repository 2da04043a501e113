import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { createTestDatabaseUrl } from '../helpers/database.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { channelStarted, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Issue #15: PostgreSQL cut off while messages arrive. The server reaches the database through a
 * TCP proxy the test cuts (every connection reset, new ones refused) and restores; messages sent
 * meanwhile wait for it and are answered once it is back, not told "An internal error occurred".
 */

const databaseUrl = process.env.DATABASE_URL || undefined;

describe.skipIf(!databaseUrl)('a PostgreSQL outage', () => {
  let telegram: FakeTelegram;
  let model: FakeOpenAI;
  let database: { url: string; drop: () => Promise<void> };
  let proxy: TcpProxy;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    telegram = new FakeTelegram();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([telegram.start(), model.start()]);
    database = await createTestDatabaseUrl();
    const proxied = await TcpProxy.inFrontOf(database.url, 5432);
    proxy = proxied.proxy;
    const config = writeConfig(`server: { port: 0 }
database: { url: "${proxied.url}" }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`);
    server = await startServerProcess(['--config', config.path], { cwd: config.dir });
    await server.waitForLog(channelStarted('telegram'));
  });
  afterAll(async () => {
    proxy?.restore();
    await server?.stop();
    await proxy?.stop();
    await Promise.all([telegram?.stop(), model?.stop()]);
    await database?.drop();
  });

  it('answers the messages sent while the database was cut off once it is back, each once', async () => {
    const running = server as ServerProcess;
    // A first message makes each chat's conversation, so the outage meets the usual lookups.
    const chats = [9601, 9602, 9603];
    for (const chatId of chats) {
      const first = telegram.sendUserMessage({ chatId, chatType: 'private', text: `hello ${chatId}` });
      await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.replyTo === first.message_id && m.text === `Echo: hello ${chatId}`), 30_000);
    }

    proxy.cut();
    const sent = chats.map((chatId) => telegram.sendUserMessage({ chatId, chatType: 'private', text: `during the outage ${chatId}` }));
    // Every message met the outage and waits (the log names each), none was answered meanwhile.
    for (const [i, chatId] of chats.entries()) {
      await running.waitForLog((entry) => entry.msg === 'database unreachable; the message waits for it' && entry.chatId === String(chatId), 30_000);
      expect(telegram.botMessages(chatId).filter((m) => m.replyTo === sent[i]?.message_id).map((m) => m.text)).toEqual(['Working on it...']);
    }

    proxy.restore();
    for (const [i, chatId] of chats.entries()) {
      const answer = `Echo: during the outage ${chatId}`;
      await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.replyTo === sent[i]?.message_id && m.text === answer), 60_000);
      expect(telegram.botMessages(chatId).filter((m) => m.replyTo === sent[i]?.message_id).map((m) => m.text)).toEqual([answer]);
    }
    expect(running.logs.filter((entry) => entry.msg === 'handling failed')).toEqual([]);
  });
});
