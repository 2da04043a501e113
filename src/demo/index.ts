import { resolve } from 'node:path';
import type { ChannelDefinition } from '../channel/types.js';
import { type Config, parseConfig } from '../config/index.js';
import type { Logger } from '../logger.js';
import { DEMO_MODEL_ID, DemoModelServer } from './model-server.js';
import { openInBrowser } from './open-browser.js';

/** Where the demo keeps its database and files, under the working directory: never the server's own `data_dir`. */
export const DEMO_DATA_DIR = '.data/demo';
/** The demo's port unless `--port` names another: the server's usual one. */
const DEMO_PORT = 8001;
/** Quiet time before a conversation's memory update: short, so `/memory` shows something soon. */
const DEMO_MEMORY_DEBOUNCE_SECONDS = 2;

export interface DemoOptions {
  platforms: readonly ChannelDefinition[];
  /** `--port`: a number, or text as the command line gives it; absent = {@link DEMO_PORT}. */
  port?: string | number | undefined;
  /** Resolved against the working directory; default {@link DEMO_DATA_DIR}. */
  dataDir?: string;
  /** Open the chat in a browser once the server listens (`--no-open` turns it off). */
  isOpeningBrowser: boolean;
  /** The process environment, read only to tell whether a browser can be opened. */
  environment: Record<string, string | undefined>;
}

export interface Demo {
  /** The server's configuration: the demo model as its only model, loopback, no accounts. */
  config: Config;
  /** Says where to chat once the server listens at `url`, and opens the page when asked to. */
  announce(url: string, logger: Logger): void;
  /** Stops the demo model; after the server, whose runs use it. */
  stop(): Promise<void>;
}

/**
 * `npm run demo`: starts the scripted demo model and returns the configuration that makes it
 * the server's only model. Nothing is read from config.yaml or the environment: the demo needs
 * no key and no platform, listens on loopback only (anyone who reaches it could chat, as on any
 * server without keys) and keeps its data apart from a real server's.
 *
 * @throws ConfigError when `port` is not a port number.
 */
export async function startDemo(options: DemoOptions): Promise<Demo> {
  const model = new DemoModelServer();
  const baseURL = await model.start();
  let config: Config;
  try {
    const port = options.port ?? DEMO_PORT;
    config = parseConfig(
      {
        server: { host: '127.0.0.1', port, ...(Number(port) > 0 ? { public_url: `http://127.0.0.1:${port}` } : {}) },
        data_dir: resolve(options.dataDir ?? DEMO_DATA_DIR),
        models: [{ name: 'demo', model: DEMO_MODEL_ID, base_url: baseURL, api_key: model.apiKey, max_retries: 0 }],
        memory: { debounce_seconds: DEMO_MEMORY_DEBOUNCE_SECONDS },
      },
      {},
      options.platforms,
    );
  } catch (error) {
    await model.stop();
    throw error;
  }
  return {
    config,
    announce(url, logger) {
      const chat = `${url}/chat`;
      logger.info(
        { chat, data_dir: config.data_dir },
        `demo ready: open ${chat} to chat with the scripted demo model (no keys needed; Ctrl+C stops it)`,
      );
      if (options.isOpeningBrowser) openInBrowser(chat, { platform: process.platform, environment: options.environment });
    },
    stop: () => model.stop(),
  };
}
