/**
 * Scale-out: the same Telegram load on one server process and on two, both on one PostgreSQL
 * database and one Redis (the scaled-out shape), with a fake model that takes a while to answer,
 * as real ones do. Each process works `channels.max_concurrency` (5) messages at once, so with a
 * slow model the second process should nearly double throughput; the ratio is the figure.
 * Needs `--database-url` and `--redis-url` (or `DATABASE_URL` / `REDIS_URL`).
 *
 * Then the takeover (issue #15): a process killed (-9) mid-answer, another process finishing the
 * same reply; the time from the kill to the final on screen, against `redis.handover_seconds`.
 */

import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { answerByAttempt, FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { deleteRedisKeys } from '../helpers/redis-keys.js';
import { adminClient } from './cpu-time.js';
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
  /** Kills per handover setting in the takeover part; default 5. */
  takeoverRounds?: number;
}

const CHUNKS = 10;

/** A fresh database on the server of `url`, dropped by the returned function. */
async function freshDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `dfc_bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const admin = adminClient(url);
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const databaseUrl = new URL(url);
  databaseUrl.pathname = `/${name}`;
  return {
    url: databaseUrl.toString(),
    drop: async () => {
      const again = adminClient(url);
      await again`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
      await again.unsafe(`drop database if exists ${name}`);
      await again.end();
    },
  };
}

/** A fresh database and Redis key prefix for one deployment; `cleanUp` drops both. */
async function freshDeployment(options: { databaseUrl: string; redisUrl: string }) {
  const database = await freshDatabase(options.databaseUrl);
  const keyPrefix = `bench-${randomUUID().slice(0, 8)}`;
  const cleanUp = async () => {
    await database.drop();
    await deleteRedisKeys(options.redisUrl, keyPrefix);
  };
  return { database, keyPrefix, cleanUp };
}

async function run(processes: number, options: ScaleOutBenchOptions & { databaseUrl: string; redisUrl: string }): Promise<LatencySummary> {
  const { database, keyPrefix, cleanUp } = await freshDeployment(options);
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
    await cleanUp();
  }
}

/** What the person sees once the message is taken over. */
const TAKEN_OVER = 'Answered after the takeover.';

/**
 * `rounds` kills: the one running process takes a slow message, a second one starts, the first
 * is killed mid-answer, and the time until the second shows the final is measured. The survivor
 * is the working process of the next round.
 */
async function takeover(rounds: number, handoverSeconds: number, options: { databaseUrl: string; redisUrl: string }): Promise<number[]> {
  const { database, keyPrefix, cleanUp } = await freshDeployment(options);
  const telegram = new FakeTelegram();
  const model = new FakeOpenAI();
  model.respond = answerByAttempt((_question, attempt) =>
    attempt === 1 ? { chunks: Array.from({ length: 200 }, (_, i) => `slow${i} `), chunkDelayMs: 250 } : { text: TAKEN_OVER },
  ).respond;
  await Promise.all([telegram.start(), model.start()]);
  const start = () =>
    startChatBenchServer({
      model,
      databaseUrl: database.url,
      extraConfig: `redis: { url: "${options.redisUrl}", key_prefix: ${keyPrefix}, handover_seconds: ${handoverSeconds} }`,
      channel: `telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }`,
    });
  const takeoverMs: number[] = [];
  let working = await start();
  const running = [working];
  try {
    for (let round = 0; round < rounds; round++) {
      const chatId = 9800 + round;
      telegram.sendUserMessage({ chatId, chatType: 'private', text: `question ${chatId}` });
      await telegram.waitFor(() => telegram.botMessages(chatId).some((m) => m.text.startsWith('slow0')), 120_000);
      const next = await start();
      running.push(next);
      const killedAt = Date.now();
      working.kill('SIGKILL');
      await telegram.waitFor(() => telegram.botMessages(chatId).some((m) => m.text === TAKEN_OVER), 120_000);
      takeoverMs.push(Date.now() - killedAt);
      working = next;
    }
    return takeoverMs;
  } finally {
    await Promise.all(running.map(stopProcess));
    await Promise.all([telegram.stop(), model.stop()]);
    await cleanUp();
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
  const rounds = options.takeoverRounds ?? 5;
  console.log(`\ntakeover: a process killed (-9) mid-answer, ${rounds} rounds; kill to the final on screen, from the other process`);
  console.log(`${'handover_seconds'.padEnd(18)} ${'p50 ms'.padStart(9)} ${'max ms'.padStart(9)} ${'p50 / handover'.padStart(15)}`);
  for (const handoverSeconds of [10, 4]) {
    const sorted = (await takeover(rounds, handoverSeconds, { databaseUrl, redisUrl })).sort((a, b) => a - b);
    const p50 = sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
    console.log(
      `${String(handoverSeconds).padEnd(18)} ${String(p50).padStart(9)} ${String(sorted.at(-1)).padStart(9)} ${(p50 / (handoverSeconds * 1000)).toFixed(2).padStart(15)}`,
    );
  }
}
