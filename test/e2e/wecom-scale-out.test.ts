import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeWeCom } from '../fakes/wecom/index.js';
import { createTestDatabaseUrl } from '../helpers/database.js';
import { deleteRedisKeys } from '../helpers/redis-keys.js';
import { channelStarted, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * WeCom scaled out: two server processes on one PostgreSQL and one Redis (`DATABASE_URL`,
 * `REDIS_URL`). WeCom keeps one long connection per bot, so one process holds it under the
 * ingress lease; both processes' workers answer, the other's through the holder.
 */

const databaseUrl = process.env.DATABASE_URL || undefined;
const redisUrl = process.env.REDIS_URL || undefined;

describe.skipIf(!databaseUrl || !redisUrl)('WeCom scaled out on PostgreSQL and Redis', () => {
  let wecom: FakeWeCom;
  let model: FakeOpenAI;
  let database: { url: string; drop: () => Promise<void> };
  const keyPrefix = `e2e-${randomUUID().slice(0, 8)}`;
  const servers: ServerProcess[] = [];

  const configYaml = () => `server: { port: 0 }
database: { url: "${database.url}" }
redis: { url: "${redisUrl}", key_prefix: ${keyPrefix}, handover_seconds: 2 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  wecom: { enabled: true, bot_id: "${wecom.botId}", bot_secret: "${wecom.secret}", ws_url: "${wecom.wsUrl}" }
`;

  beforeAll(async () => {
    wecom = new FakeWeCom();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([wecom.start(), model.start()]);
    database = await createTestDatabaseUrl();
  });
  afterAll(async () => {
    await Promise.allSettled(servers.map((server) => server.stop()));
    await Promise.all([wecom?.stop(), model?.stop()]);
    await database?.drop();
    await deleteRedisKeys(redisUrl as string, keyPrefix);
  });

  it('holds one long connection for two processes, answers every message once in its stream, and hands the connection over', async () => {
    const first = await startServerProcess(['--config', writeConfig(configYaml()).path]);
    servers.push(first);
    await first.waitForLog(channelStarted('wecom'));
    const second = await startServerProcess(['--config', writeConfig(configYaml()).path]);
    servers.push(second);
    const health = async (server: ServerProcess) => ((await (await fetch(`${server.url}/health`)).json()) as { channels: Record<string, unknown> }).channels.wecom;
    expect(await health(first)).toEqual({ running: true });
    expect(await health(second)).toMatchObject({ running: false, standby: true });
    expect(wecom.authentications).toBe(1);

    // Both processes' workers take turns; the standby's replies go through the holder.
    const users = Array.from({ length: 8 }, (_, i) => `scale.user${i}`);
    const sent = await Promise.all(users.map((userId) => wecom.sendUserMessage({ chat: 'private', userId, text: `both ${userId}` })));
    for (const [i, userId] of users.entries()) {
      await wecom.waitFor(() => wecom.botMessages(userId).find((m) => m.isFinished && m.replyTo === sent[i]?.msgid && m.text === `Echo: both ${userId}`), 20_000);
    }
    expect(users.map((userId) => wecom.botMessages(userId).length)).toEqual(users.map(() => 1));
    expect(model.requests).toHaveLength(users.length);
    // Each turn ran in one of the two (the queue spreads them; a run seen here: 3 and 5).
    const accepted = (server: ServerProcess) => server.logs.filter((entry) => entry.msg === 'inbound accepted' && entry.channel === 'wecom').length;
    expect(accepted(first) + accepted(second)).toBe(users.length);

    // The holder shuts down and gives the lease up: the standby connects and answers.
    await first.stop();
    await second.waitForLog(channelStarted('wecom'), 15_000);
    const after = await wecom.sendUserMessage({ chat: 'private', userId: 'scale.after', text: 'still there?' });
    await wecom.waitFor(() => wecom.botMessages('scale.after').find((m) => m.isFinished && m.replyTo === after.msgid && m.text === 'Echo: still there?'), 20_000);
    expect(wecom.authentications).toBe(2);
  });
});
