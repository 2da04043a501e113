import { autoRetry } from '@grammyjs/auto-retry';
import { Bot } from 'grammy';
import type { ChannelAdapter, ChannelCapabilities, ChannelDeps } from '../../src/channel/types.js';
import { ConfigError } from '../../src/errors.js';
import type { TelegramConfig } from './config.js';
import { createTelegramEgress } from './egress.js';
import { createTelegramFiles } from './files.js';
import { TelegramIngress } from './ingress.js';
import { TELEGRAM_LIMITS } from './limits.js';
import { GroupPacer } from './pacing.js';

/** What core needs to know about Telegram, as data. */
export const TELEGRAM_CAPABILITIES: ChannelCapabilities = {
  streaming: 'edit',
  maxMessageChars: TELEGRAM_LIMITS.maxMessageChars,
  hasThreads: false,
  files: { maxInboundBytes: TELEGRAM_LIMITS.maxDownloadBytes, maxOutboundBytes: TELEGRAM_LIMITS.maxUploadBytes },
  groupTrigger: 'every-message',
  runMode: 'stream',
};

/** Retries of one API call on 5xx, inside the SDK. */
const SDK_RETRY_ATTEMPTS = 3;

/**
 * The Telegram adapter: grammY long polling in, edited messages out, photos and documents both ways.
 *
 * @throws ConfigError when `bot_token` is missing.
 */
export function createTelegramChannel(config: TelegramConfig, deps: ChannelDeps): ChannelAdapter {
  if (config.bot_token === undefined) {
    throw new ConfigError(['channels.telegram.bot_token: required when the Telegram channel is enabled']);
  }
  const logger = deps.logger.child({ channel: 'telegram' });
  const bot = new Bot(config.bot_token, { client: { apiRoot: config.api_root } });
  // 5xx are retried in the SDK; 429s are not (`maxDelaySeconds: 0`): the shared rate gate owns
  // them, so waiting is visible to every sender to that chat. Nor are network errors: the plugin
  // would retry those without end (backing off to an hour), holding a worker for as long as
  // Telegram is unreachable; failing fast hands a final to the outbox, and polling retries by itself.
  bot.api.config.use(autoRetry({ maxDelaySeconds: 0, maxRetryAttempts: SDK_RETRY_ATTEMPTS, rethrowHttpErrors: true }));
  const gate = deps.rateGate('chat');
  const pacer = new GroupPacer(deps.requestWindow('group', TELEGRAM_LIMITS.groupMessagesPerMinute, 60_000));
  const ingress = new TelegramIngress({
    bot,
    deps: { ...deps, logger },
    gate,
    pacer,
    allowedUsers: config.allowed_users,
    pollingTimeoutSeconds: config.polling_timeout_seconds,
  });
  return {
    name: 'telegram',
    displayName: 'Telegram',
    capabilities: TELEGRAM_CAPABILITIES,
    // Telegram refuses a second long poller (409 Conflict).
    exclusiveIngress: true,
    egress: createTelegramEgress({ api: bot.api, gate, pacer, logger, now: deps.now }),
    files: createTelegramFiles({ api: bot.api, token: config.bot_token, apiRoot: config.api_root, gate, pacer, logger }),
    start: () => ingress.start(),
    stop: () => ingress.stop(),
    status: () => ingress.status(),
  };
}
