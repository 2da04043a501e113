import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { like } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/index.js';
import { inboundDedupe } from '../../src/db/schema/index.js';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { createTestDatabaseUrl } from '../helpers/database.js';
import { deleteRedisKeys } from '../helpers/redis-keys.js';
import { channelStarted, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Each occurrence of a schedule runs once (issue #17), through the real server: with two
 * processes on one PostgreSQL and one Redis both looking at the schedules, and across a stop
 * that spans several occurrences. What the chat shows is checked against the turn journal, where
 * every occurrence that fired has its own row (`schedule:<id>:<due ms>`).
 */

const databaseUrl = process.env.DATABASE_URL || undefined;
const redisUrl = process.env.REDIS_URL || undefined;
const TASK = 'count the open PRs';
const POST = `Echo: ${TASK}`;

interface Rig {
  telegram: FakeTelegram;
  model: FakeOpenAI;
}

async function startRig(): Promise<Rig> {
  const rig = { telegram: new FakeTelegram(), model: new FakeOpenAI({ apiKey: 'sk-e2e' }) };
  await Promise.all([rig.telegram.start(), rig.model.start()]);
  return rig;
}

function configYaml(rig: Rig, extra: string): string {
  return `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${rig.model.baseURL}", api_key: sk-e2e, max_retries: 0 }
memory: { enabled: false }
schedules: { min_interval_seconds: 2, timezone: UTC }
channels:
  telegram: { enabled: true, bot_token: "${rig.telegram.token}", api_root: "${rig.telegram.apiRoot}", polling_timeout_seconds: 1 }
${extra}`;
}

/** Makes `/schedule every 2s <TASK>` in `chatId` and resolves with the schedule's id. */
async function scheduleEvery2s(rig: Rig, chatId: number): Promise<string> {
  const sent = rig.telegram.sendUserMessage({ chatId, chatType: 'private', text: `/schedule every 2s ${TASK}` });
  const reply = await rig.telegram.waitFor(() => {
    const text = rig.telegram.botMessages(chatId).find((m) => m.replyTo === sent.message_id)?.text;
    return text?.startsWith('Scheduled ') ? text : undefined;
  }, 60_000);
  return (/^Scheduled ([a-z0-9]{6}):/.exec(reply) as RegExpExecArray)[1] as string;
}

async function cancel(rig: Rig, chatId: number, id: string): Promise<void> {
  const sent = rig.telegram.sendUserMessage({ chatId, chatType: 'private', text: `/schedule cancel ${id}` });
  await rig.telegram.waitFor(() => rig.telegram.botMessages(chatId).find((m) => m.replyTo === sent.message_id && m.text === `Schedule ${id} cancelled.`), 60_000);
}

/** The scheduled posts in the chat: bot messages that reply to nobody, with the run's final text. */
function posts(rig: Rig, chatId: number): number {
  return rig.telegram.botMessages(chatId).filter((m) => m.replyTo === undefined && m.text === POST).length;
}

/** The due times (ms) of the occurrences the journal took for schedule `id`, in order. */
async function journaledOccurrences(database: { url?: string; dataDir?: string }, id: string): Promise<number[]> {
  const handle = await openDatabase({ ...(database.url === undefined ? {} : { url: database.url }), dataDir: database.dataDir ?? '.' });
  try {
    const rows = await handle.db.select({ messageId: inboundDedupe.messageId }).from(inboundDedupe).where(like(inboundDedupe.messageId, `schedule:${id}:%`));
    return rows.map((row) => Number(row.messageId.split(':')[2])).sort((a, b) => a - b);
  } finally {
    await handle.close();
  }
}

describe.skipIf(!databaseUrl || !redisUrl)('a schedule with two processes on PostgreSQL and Redis', () => {
  let rig: Rig | undefined;
  let database: { url: string; drop: () => Promise<void> } | undefined;
  const servers: ServerProcess[] = [];
  const keyPrefix = `e2e-${randomUUID().slice(0, 8)}`;
  afterAll(async () => {
    await Promise.allSettled(servers.map((server) => server.stop()));
    await Promise.all([rig?.telegram.stop(), rig?.model.stop()]);
    await database?.drop();
    await deleteRedisKeys(redisUrl as string, keyPrefix);
  });

  it('fires every 2 s ten times and more, each occurrence once, from whichever process looks first', async () => {
    rig = await startRig();
    database = await createTestDatabaseUrl();
    const yaml = configYaml(rig, `database: { url: "${database.url}" }\nredis: { url: "${redisUrl}", key_prefix: ${keyPrefix} }\n`);
    servers.push(await startServerProcess(['--config', writeConfig(yaml).path]));
    await (servers[0] as ServerProcess).waitForLog(channelStarted('telegram'));
    servers.push(await startServerProcess(['--config', writeConfig(yaml).path]));
    const chatId = 9100;
    const id = await scheduleEvery2s(rig, chatId);
    await rig.telegram.waitFor(() => posts(rig as Rig, chatId) >= 10 || undefined, 120_000);
    await cancel(rig, chatId, id);
    const occurrences = await journaledOccurrences({ url: database.url }, id);
    expect(occurrences.length).toBeGreaterThanOrEqual(10);
    // Occurrences 2 s apart (a late one is never made up, so a stalled machine may leave a gap).
    for (const [i, due] of occurrences.slice(1).entries()) expect((due - (occurrences[i] as number)) % 2000).toBe(0);
    // The chat shows each occurrence once, the model ran once for each, and one process moved
    // the schedule on for each (the other saw it taken).
    await rig.telegram.waitFor(() => posts(rig as Rig, chatId) >= occurrences.length || undefined, 60_000);
    expect(posts(rig, chatId)).toBe(occurrences.length);
    expect(rig.model.requests.filter((request) => lastUserText(request.messages) === TASK)).toHaveLength(occurrences.length);
    const fired = servers.flatMap((server) => server.logs.filter((entry) => entry.msg === 'schedule fired' && entry.scheduleId === id));
    expect(fired).toHaveLength(occurrences.length);
  }, 300_000);
});

describe('a schedule across a stop of the server', () => {
  let rig: Rig | undefined;
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.stop();
    await Promise.all([rig?.telegram.stop(), rig?.model.stop()]);
  });

  it('runs once at start for the occurrences that fell while it was down, then goes on every 2 s', async () => {
    rig = await startRig();
    const config = writeConfig(configYaml(rig, ''));
    server = await startServerProcess(['--config', config.path], { cwd: config.dir });
    const chatId = 9200;
    const id = await scheduleEvery2s(rig, chatId);
    await rig.telegram.waitFor(() => posts(rig as Rig, chatId) >= 1 || undefined, 60_000);
    await server.stop();
    // Down across at least three occurrences: the stop itself is what is tested.
    await new Promise((resolve) => setTimeout(resolve, 7000));
    const before = posts(rig, chatId);
    // Occurrences due before this fell while no process ran; later ones are the schedule going on
    // (a loaded machine may take seconds from here to the scheduler's first look).
    const restartedAt = Date.now();
    server = await startServerProcess(['--config', config.path], { cwd: config.dir });
    const restarted = server;
    await rig.telegram.waitFor(() => posts(rig as Rig, chatId) >= before + 2 || undefined, 60_000);
    await cancel(rig, chatId, id);
    await restarted.stop();
    // Of the three or more occurrences that fell while it was down, one ran at start (the
    // schedule's missed policy, run_once); every later one was due after the start.
    const dues = restarted.logs.filter((entry) => entry.msg === 'schedule fired' && entry.scheduleId === id).map((entry) => Date.parse(String(entry.dueAt)));
    expect(dues.filter((due) => due < restartedAt)).toHaveLength(1);
    expect(dues.length).toBeGreaterThanOrEqual(2);
    // Each occurrence the journal took was posted once.
    const occurrences = await journaledOccurrences({ dataDir: join(config.dir, '.data') }, id);
    expect(posts(rig, chatId)).toBe(occurrences.length);
  }, 300_000);
});
