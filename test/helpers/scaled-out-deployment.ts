import { randomUUID } from 'node:crypto';
import { type ServerProcess, startServerProcess, writeConfig } from '../e2e/server-process.js';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { createTestDatabaseUrl } from './database.js';
import { deleteRedisKeys } from './redis-keys.js';

/** The Redis server tests may use (`REDIS_URL`). */
const redisUrl = process.env.REDIS_URL || undefined;

/** True when `DATABASE_URL` and `REDIS_URL` are both set: without them, skip the scaled-out tests. */
export const hasScaleOutServices = Boolean(process.env.DATABASE_URL && redisUrl);

/** The fake platform server of the deployment's one channel. */
export interface ChannelFake {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ScaledOutDeployment {
  /** The fake model every server process of the deployment answers with. */
  model: FakeOpenAI;
  /** Every server process {@link ScaledOutDeployment.startServer} started, oldest first, stopped and killed ones too. */
  servers: ServerProcess[];
  /** Starts one more server process of the deployment, with a config file of its own, and resolves once it listens. */
  startServer(): Promise<ServerProcess>;
  /** Stops every server process, then the channel's fake and the model; drops the database and deletes the Redis keys. Safe after a failed start. */
  stop(): Promise<void>;
}

/**
 * The scaled-out shape: server processes on one fresh PostgreSQL database (on the `DATABASE_URL`
 * server) and one Redis key prefix (on `REDIS_URL`), with a fake model and one channel. Starts
 * `channelFake` and the model; `channelYaml` is then asked for the channel's entry under
 * `channels:` (e.g. `telegram: { enabled: true, … }`), which names the started fake's address.
 * Another process takes up a dead process's message after 6 s (`redis.handover_seconds`), not the
 * default 10, so takeover tests stay short; not 2 either: a live worker renews its lock every
 * quarter of it, and on a loaded machine a stall of its event loop longer than that would hand a
 * message it still runs to the other process (answered once, but asked of the model twice).
 *
 * @throws when `DATABASE_URL` or `REDIS_URL` is not set.
 */
export async function startScaledOutDeployment(channelFake: ChannelFake, channelYaml: () => string): Promise<ScaledOutDeployment> {
  if (!hasScaleOutServices) throw new Error('startScaledOutDeployment needs DATABASE_URL and REDIS_URL');
  const model = new FakeOpenAI({ apiKey: 'sk-e2e' });
  const keyPrefix = `e2e-${randomUUID().slice(0, 8)}`;
  const servers: ServerProcess[] = [];
  let database: { url: string; drop: () => Promise<void> } | undefined;
  const stop = async () => {
    await Promise.allSettled(servers.map((server) => server.stop()));
    await Promise.all([channelFake.stop(), model.stop()]);
    await database?.drop();
    await deleteRedisKeys(redisUrl as string, keyPrefix);
  };
  try {
    await Promise.all([channelFake.start(), model.start()]);
    database = await createTestDatabaseUrl();
  } catch (error) {
    await stop();
    throw error;
  }
  const configYaml = `server: { port: 0 }
database: { url: "${database.url}" }
redis: { url: "${redisUrl}", key_prefix: ${keyPrefix}, handover_seconds: 6 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  ${channelYaml()}
`;
  const startServer = async () => {
    const server = await startServerProcess(['--config', writeConfig(configYaml).path]);
    servers.push(server);
    return server;
  };
  return { model, servers, startServer, stop };
}
