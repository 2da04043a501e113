/**
 * Scale-out: the same Telegram load on one server process and on two, both on one PostgreSQL
 * database and one Redis (the scaled-out shape), with a fake model that takes a while to answer,
 * as real ones do. Each process works `channels.max_concurrency` (5) messages at once, so with a
 * slow model the second process should nearly double throughput; the ratio is the figure.
 * Needs `--database-url` and `--redis-url` (or `DATABASE_URL` / `REDIS_URL`).
 */
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { answerTo } from './final-watcher.js';
import { startChatBenchServer, stopProcess } from './server-process.js';
import { formatRow, type LatencySummary } from './stats.js';
import { drive } from './telegram.js';

export interface ScaleOutBenchOptions {
  chats: number;
  messagesPerChat: number;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  /** How long the fake model takes per answer, spread over its chunks. */
  modelMs?: number;
}

const CHUNKS = 10;

/** A fresh database on the server of `url`, dropped by the returned function. */
async function freshDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `dfc_bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const databaseUrl = new URL(url);
  databaseUrl.pathname = `/${name}`;
  return {
    url: databaseUrl.toString(),
    drop: async () => {
      const again = postgres(url, { max: 1, onnotice: () => {} });
      await again`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
      await again.unsafe(`drop database if exists ${name}`);
      await again.end();
    },
  };
}

async function run(processes: number, options: ScaleOutBenchOptions & { databaseUrl: string; redisUrl: string }): Promise<LatencySummary> {
  const database = await freshDatabase(options.databaseUrl);
  const keyPrefix = `bench-${randomUUID().slice(0, 8)}`;
  const telegram = new FakeTelegram();
  const model = new FakeOpenAI();
  await Promise.all([telegram.start(), model.start()]);
  const chunkDelayMs = Math.round((options.modelMs ?? 250) / CHUNKS);
  model.respond = (request) => {
    const text = answerTo(lastUserText(request.messages));
    const size = Math.ceil(text.length / CHUNKS);
    return { chunks: Array.from({ length: CHUNKS }, (_, i) => text.slice(i * size, (i + 1) * size)), chunkDelayMs };
  };
  const servers: ChildProcess[] = [];
  try {
    for (let i = 0; i < processes; i++) {
      servers.push(
        await startChatBenchServer({
          model,
          databaseUrl: database.url,
          extraConfig: `redis: { url: "${options.redisUrl}", key_prefix: ${keyPrefix} }`,
          channel: `telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }`,
        }),
      );
    }
    await drive(telegram, Math.min(options.chats, 5), 2, 1_000_000); // warm-up
    return await drive(telegram, options.chats, options.messagesPerChat, 1);
  } finally {
    await Promise.all(servers.map(stopProcess));
    await Promise.all([telegram.stop(), model.stop()]);
    await database.drop();
    const redis = new Redis(options.redisUrl);
    const keys = await redis.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
}

export async function runScaleOutBench(options: ScaleOutBenchOptions): Promise<void> {
  const { databaseUrl, redisUrl } = options;
  if (databaseUrl === undefined || redisUrl === undefined) {
    console.log('\nscale-out: skipped (needs --database-url and --redis-url, or DATABASE_URL and REDIS_URL)');
    return;
  }
  const total = options.chats * options.messagesPerChat;
  console.log(
    `\nscale-out on PostgreSQL + Redis: telegram, ${options.chats} chats × ${options.messagesPerChat} messages (${total}), fake model taking ${options.modelMs ?? 250} ms per answer, max_concurrency 5 per process`,
  );
  const one = await run(1, { ...options, databaseUrl, redisUrl });
  const two = await run(2, { ...options, databaseUrl, redisUrl });
  console.log(`${''.padEnd(24)} ${'msgs/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
  console.log(formatRow('  one process', one));
  console.log(formatRow('  two processes', two));
  console.log(
    `${'ratio (two / one)'.padEnd(24)} ${(two.perSecond / one.perSecond).toFixed(2).padStart(9)} ${(two.p50Ms / one.p50Ms).toFixed(2).padStart(9)} ${(two.p99Ms / one.p99Ms).toFixed(2).padStart(9)}`,
  );
}
