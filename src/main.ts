import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { platforms } from '../channels/index.js';
import { forgetVariables, loadConfig } from './config/index.js';
import type { Demo } from './demo/index.js';
import { ConfigError, describeError } from './errors.js';
import { createLogger, logDestination } from './logger.js';
import { PACKAGE_MANIFEST } from './paths.js';
import { SERVER_V8_FLAGS } from './v8-flags.js';

const USAGE = `usage: npm start [-- options]        (compiled: npm run start:dist [-- options])

Runs the deerflow-channels server: the chat channels config.yaml enables, the agent, and the
HTTP gateway with /health and the web console.

options:
  -c, --config <path>   config file (default: $DEERFLOW_CONFIG, else ./config.yaml; absent = defaults)
      --demo            try it without any key (npm run demo): a scripted demo model, the web chat
                        on loopback, data in ./.data/demo; config.yaml is not read
      --no-open         with --demo: do not open the chat in a browser
      --port <n>        with --demo: the port (default 8001; 0 picks a free one)
  -h, --help            print this and exit
  -v, --version         print the version and exit

docs/configuration.md lists every key.`;

/** From package.json, which `npm run build` copies into dist/ as well. */
function version(): string {
  try {
    return (JSON.parse(readFileSync(PACKAGE_MANIFEST, 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * `npm start [-- --config path]`: the composition root. It is the one file in src/ allowed to
 * import the platform registry (test/unit/boundary.test.ts).
 *
 * Everything before the server's own import is light on purpose (arguments, config, logger): a
 * typo in config.yaml or `--help` answers at once, before the agent, the database and the
 * enabled channels' SDKs are loaded.
 */
async function main(): Promise<void> {
  let values: {
    config?: string | undefined;
    help?: boolean | undefined;
    version?: boolean | undefined;
    demo?: boolean | undefined;
    'no-open'?: boolean | undefined;
    port?: string | undefined;
  };
  try {
    ({ values } = parseArgs({
      options: {
        config: { type: 'string', short: 'c' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
        demo: { type: 'boolean' },
        'no-open': { type: 'boolean' },
        port: { type: 'string' },
      },
    }));
    if (values.demo === true && values.config !== undefined) throw new Error('--demo runs on its own configuration: it takes no --config');
    if (values.demo !== true && (values['no-open'] !== undefined || values.port !== undefined)) throw new Error('--no-open and --port go with --demo');
  } catch (error) {
    process.stderr.write(`deerflow-channels: ${describeError(error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (values.version) {
    process.stdout.write(`deerflow-channels ${version()}\n`);
    return;
  }
  let loaded: ReturnType<typeof loadConfig>;
  let demo: Demo | undefined;
  try {
    if (values.demo === true) {
      // The demo brings its own model and configuration; nothing of config.yaml or the environment is read.
      const { startDemo } = await import('./demo/index.js');
      demo = await startDemo({ platforms, port: values.port, isOpeningBrowser: values['no-open'] !== true, environment: process.env });
      loaded = { config: demo.config, path: undefined, warnings: [], readVariables: [] };
    } else {
      loaded = loadConfig({ path: values.config, env: process.env, platforms });
    }
    // The config holds the secrets now; the environment keeps none for anything that reads it later.
    forgetVariables(process.env, loaded.readVariables);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`deerflow-channels: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const destination = await logDestination(loaded.config.log.format, process.stdout.isTTY === true);
  const logger = createLogger({ level: loaded.config.log.level, ...(destination === undefined ? {} : { destination }) });
  for (const warning of loaded.warnings) logger.warn(warning);
  logger.info({ config: demo === undefined ? (loaded.path ?? '(none: defaults)') : '(demo)' }, 'configuration loaded');

  for (const flag of SERVER_V8_FLAGS) setFlagsFromString(flag);
  const { startServer } = await import('./server.js');
  const server = await startServer({ config: loaded.config, configPath: loaded.path, platforms, logger, environment: process.env });
  demo?.announce(server.url, logger);
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) process.exit(130);
    logger.info({ signal }, 'stop requested');
    server
      .stop()
      .then(() => demo?.stop())
      .then(
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
