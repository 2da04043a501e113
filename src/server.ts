import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InProcessBus } from './bus/in-process.js';
import type { ChannelAdapter, ChannelDefinition, ChannelStatus } from './channel/types.js';
import type { Config } from './config/index.js';
import { openDatabase } from './db/index.js';
import { SqlDedupeStore } from './db/repos/inbound-dedupe-repo.js';
import { ThreadMapRepo } from './db/repos/thread-map-repo.js';
import { describeError } from './errors.js';
import { buildApp } from './gateway/app.js';
import type { HealthReport } from './gateway/types.js';
import type { Logger } from './logger.js';
import { ChannelManager } from './manager/channel-manager.js';
import { ThreadResolver } from './manager/threads.js';
import { createEmbeddedRuntime } from './runtime/embedded/index.js';

export interface StartServerOptions {
  config: Config;
  platforms: readonly ChannelDefinition[];
  logger: Logger;
  /** Folder of agent definitions; defaults to the repository's `agents/`. */
  agentsDir?: string;
}

export interface RunningServer {
  /** `http://host:port` the gateway listens on. */
  url: string;
  /** Stops intake, lets in-flight replies finish within the grace period, then closes everything. */
  stop(): Promise<void>;
}

const DEFAULT_AGENTS_DIR = fileURLToPath(new URL('../agents', import.meta.url));

/**
 * Wires the straight line of DESIGN.md: channels → bus → manager → runtime, plus the gateway.
 * The only place that knows every part; it still names no platform.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config, logger } = options;
  const database = await openDatabase({ url: config.database.url, dataDir: resolve(config.data_dir) });
  const runtime = await createEmbeddedRuntime({
    db: database.db,
    models: config.models,
    agentsDir: options.agentsDir ?? DEFAULT_AGENTS_DIR,
    logger: logger.child({ component: 'runtime' }),
    isSoleProcess: database.kind === 'pglite',
  });
  const bus = new InProcessBus({
    maxQueued: config.channels.inbound_queue_maxsize,
    concurrency: config.channels.max_concurrency,
    logger: logger.child({ component: 'bus' }),
  });
  const adapters = new Map<string, ChannelAdapter>();
  const manager = new ChannelManager({
    runtime,
    threads: new ThreadResolver(new ThreadMapRepo(database.db), runtime),
    dedupe: new SqlDedupeStore(database.db),
    channel: (name) => adapters.get(name),
    logger: logger.child({ component: 'manager' }),
  });

  const startFailures = new Map<string, string>();
  for (const platform of options.platforms) {
    const channelConfig = (config.channels as Record<string, unknown>)[platform.name];
    if (channelConfig === undefined || !platform.isEnabled(channelConfig)) continue;
    adapters.set(
      platform.name,
      platform.create(channelConfig, {
        intake: bus,
        commandNames: manager.commandNames(),
        logger: logger.child({ channel: platform.name }),
        now: Date.now,
      }),
    );
  }
  bus.start((message, signal) => manager.handle(message, signal));
  await Promise.all(
    [...adapters.values()].map(async (adapter) => {
      try {
        await adapter.start();
        logger.info({ channel: adapter.name }, 'channel started');
      } catch (error) {
        // One platform refusing us (bad token, unreachable) must not take the server down.
        startFailures.set(adapter.name, adapter.status().reason ?? 'failed to start');
        logger.error({ channel: adapter.name, err: describeError(error) }, 'channel failed to start');
      }
    }),
  );

  const channelStatus = (adapter: ChannelAdapter): ChannelStatus => {
    const failure = startFailures.get(adapter.name);
    return failure ? { running: false, reason: failure } : adapter.status();
  };
  const health = async (): Promise<HealthReport> => {
    let databaseStatus: HealthReport['database'] = { ok: true, kind: database.kind };
    try {
      await database.ping();
    } catch (error) {
      databaseStatus = { ok: false, kind: database.kind, error: describeError(error).message };
    }
    const models = runtime.models().map((m) => m.name);
    return {
      ok: databaseStatus.ok,
      database: databaseStatus,
      channels: Object.fromEntries([...adapters.values()].map((a) => [a.name, channelStatus(a)])),
      model: { configured: models.length > 0, models },
    };
  };
  const app = await buildApp({
    runtime,
    health,
    logger: logger.child({ component: 'gateway' }),
    channelRoutes: [...adapters.values()].flatMap((a) => (a.routes ? [{ name: a.name, routes: a.routes }] : [])),
  });
  const address = await app.listen({ host: config.server.host, port: config.server.port });
  logger.info({ url: address, database: database.kind, channels: [...adapters.keys()], models: runtime.models().length }, 'server listening');

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      logger.info('shutting down');
      // Intake first; egress stays up so in-flight replies still get their final edit.
      await Promise.allSettled([...adapters.values()].map((a) => a.stop()));
      const report = await bus.stop(config.channels.shutdown_grace_period_seconds * 1000);
      logger.info(report, 'inbound work settled');
      await runtime.close();
      await app.close();
      await database.close();
    })();
    return stopping;
  };
  return { url: address, stop };
}
