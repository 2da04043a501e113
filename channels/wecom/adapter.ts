import type { ChannelAdapter, ChannelCapabilities, ChannelDeps } from '../../src/channel/types.js';
import { ConfigError } from '../../src/errors.js';
import type { WeComConfig } from './config.js';
import { WeComConnection } from './connection.js';
import { createWeComEgress } from './egress.js';
import { createWeComFiles } from './files.js';
import { WeComIngress } from './ingress.js';
import { WECOM_LIMITS } from './limits.js';
import { RelayedSender } from './relay.js';

/** What core needs to know about WeCom. */
export const WECOM_CAPABILITIES: ChannelCapabilities = {
  // One stream message per answer, its content replaced until `finish` (reference §6.7).
  streaming: 'card',
  minPartialIntervalMs: WECOM_LIMITS.streamUpdateIntervalMs,
  maxMessageChars: WECOM_LIMITS.maxMessageChars,
  hasThreads: false,
  files: { maxInboundBytes: WECOM_LIMITS.maxDownloadBytes, maxOutboundBytes: WECOM_LIMITS.maxFileUploadBytes },
  // Groups deliver only messages that @-mention the bot.
  groupTrigger: 'mention',
  runMode: 'stream',
  // Reference §6.0: bindings hold per bot, and one without a workspace counts too.
  identityFallsBackToNoWorkspace: true,
};

/** Test seams. */
export interface WeComChannelOptions {
  /** The SDK's reconnect base delay; default 1000 ms. */
  reconnectBaseMs?: number;
  /** How long a send relayed to the connection's holder waits; default 10000 ms. */
  relayTimeoutMs?: number;
}

/**
 * The WeCom AI bot adapter: one websocket long connection (the official SDK) for messages in,
 * stream replies, markdown messages and files out.
 *
 * @throws ConfigError when `bot_id` or `bot_secret` is missing.
 */
export function createWeComChannel(config: WeComConfig, deps: ChannelDeps, options: WeComChannelOptions = {}): ChannelAdapter {
  const missing = [
    ...(config.bot_id === undefined ? ['channels.wecom.bot_id: required when the WeCom channel is enabled'] : []),
    ...(config.bot_secret === undefined ? ['channels.wecom.bot_secret: required when the WeCom channel is enabled'] : []),
  ];
  if (missing.length > 0) throw new ConfigError(missing);
  const logger = deps.logger.child({ channel: 'wecom' });
  let ingress: WeComIngress | undefined;
  const connection = new WeComConnection({
    botId: config.bot_id as string,
    botSecret: config.bot_secret as string,
    wsUrl: config.ws_url,
    logger,
    onMessage: (frame) => ingress?.receive(frame),
    onReplaced: () => ingress?.replaced(),
    ...(options.reconnectBaseMs === undefined ? {} : { reconnectBaseMs: options.reconnectBaseMs }),
  });
  const sender = new RelayedSender({ connection, topic: deps.topic('relay'), logger, ...(options.relayTimeoutMs === undefined ? {} : { timeoutMs: options.relayTimeoutMs }) });
  ingress = new WeComIngress({ connection, allowedUsers: config.allowed_users, workingMessage: config.working_message, deps, logger });
  const started = ingress;
  return {
    name: 'wecom',
    displayName: 'WeCom',
    capabilities: WECOM_CAPABILITIES,
    egress: createWeComEgress({ connection: sender, workingMessage: config.working_message, gate: deps.rateGate('chat'), logger, now: deps.now }),
    files: createWeComFiles(sender),
    // WeCom keeps one long connection per bot: a second one closes the first (path/101463).
    exclusiveIngress: true,
    start: async () => {
      await started.start();
      sender.serve();
    },
    stop: async () => {
      sender.stopServing();
      await started.stop();
    },
    status: () => started.status(),
  };
}
