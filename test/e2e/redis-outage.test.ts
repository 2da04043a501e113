import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { createTestDatabaseUrl } from '../helpers/database.js';
import { deleteRedisKeys } from '../helpers/redis-keys.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { channelStarted, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Issue #15: Redis cut off while a scaled-out server (PostgreSQL + Redis) takes messages. The
 * server reaches Redis through a TCP proxy the test cuts and restores. Messages sent meanwhile
 * cannot be queued: Telegram is not told they were taken, so it offers them again, and each is
 * answered once Redis is back (before the fix: none was, ever).
 */

const databaseUrl = process.env.DATABASE_URL || undefined;
const redisUrl = process.env.REDIS_URL || undefined;

describe.skipIf(!databaseUrl || !redisUrl)('a Redis outage, scaled out', () => {
  let telegram: FakeTelegram;
  let model: FakeOpenAI;
  let database: { url: string; drop: () => Promise<void> };
  let proxy: TcpProxy;
  let server: ServerProcess | undefined;
  const keyPrefix = `e2e-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    telegram = new FakeTelegram();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([telegram.start(), model.start()]);
    database = await createTestDatabaseUrl();
    const proxied = await TcpProxy.inFrontOf(redisUrl as string, 6379);
    proxy = proxied.proxy;
    const config = writeConfig(`server: { port: 0 }
database: { url: "${database.url}" }
redis: { url: "${proxied.url}", key_prefix: ${keyPrefix} }
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
    await deleteRedisKeys(redisUrl as string, keyPrefix);
  });

  it('answers the messages sent while Redis was cut off once it is back, each once', async () => {
    const running = server as ServerProcess;
    const warm = telegram.sendUserMessage({ chatId: 9701, chatType: 'private', text: 'before' });
    await telegram.waitFor(() => telegram.botMessages(9701).find((m) => m.replyTo === warm.message_id && m.text === 'Echo: before'), 30_000);

    proxy.cut();
    const chats = [9701, 9702, 9703];
    const sent = chats.map((chatId) => telegram.sendUserMessage({ chatId, chatType: 'private', text: `during the outage ${chatId}` }));
    // The queue refused them: left with Telegram, unconfirmed, and nothing shown meanwhile.
    await running.waitForLog((entry) => entry.msg === 'inbound message refused by the intake', 30_000);
    expect(telegram.unconfirmedUpdates()).toBeGreaterThan(0);

    proxy.restore();
    for (const [i, chatId] of chats.entries()) {
      const answer = `Echo: during the outage ${chatId}`;
      await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.replyTo === sent[i]?.message_id && m.text === answer), 90_000);
      expect(telegram.botMessages(chatId).filter((m) => m.replyTo === sent[i]?.message_id).map((m) => m.text)).toEqual([answer]);
    }
  });
});
