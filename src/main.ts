import { parseArgs } from 'node:util';
import { platforms } from '../channels/index.js';
import { forgetVariables, loadConfig } from './config/index.js';
import { ConfigError, describeError } from './errors.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';

/**
 * `npm start [-- --config path]`: the composition root. It is the one file in src/ allowed to
 * import the platform registry (test/unit/boundary.test.ts).
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { config: { type: 'string', short: 'c' } } });
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig({ path: values.config, env: process.env, platforms });
    // The config holds the secrets now; the environment keeps none for anything that reads it later.
    forgetVariables(process.env, loaded.readVariables);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`deerflow-channels: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ level: loaded.config.log.level });
  for (const warning of loaded.warnings) logger.warn(warning);
  logger.info({ config: loaded.path ?? '(none: defaults)' }, 'configuration loaded');

  const server = await startServer({ config: loaded.config, configPath: loaded.path, platforms, logger, environment: process.env });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) process.exit(130);
    logger.info({ signal }, 'stop requested');
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: describeError(error) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

main().catch((error: unknown) => {
  process.stderr.write(`deerflow-channels: failed to start: ${describeError(error).message}\n`);
  process.exit(1);
});
