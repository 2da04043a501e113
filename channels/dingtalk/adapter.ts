import type { ChannelAdapter, ChannelCapabilities, ChannelDeps } from '../../src/channel/types.js';
import { ConfigError } from '../../src/errors.js';
import { DingTalkApi } from './api.js';
import { CardApi } from './card.js';
import type { DingTalkConfig } from './config.js';
import { createDingTalkEgress } from './egress.js';
import { createDingTalkFiles } from './files.js';
import { DingTalkIngress } from './ingress.js';
import { DINGTALK_LIMITS } from './limits.js';
import { RobotSender, SessionWebhooks } from './sender.js';

/** What core needs to know about DingTalk; streaming only with an AI card template. */
export function dingtalkCapabilities(hasCards: boolean): ChannelCapabilities {
  return {
    streaming: hasCards ? 'card' : 'none',
    maxMessageChars: DINGTALK_LIMITS.maxMessageChars,
    hasThreads: false,
    files: { maxInboundBytes: DINGTALK_LIMITS.maxDownloadBytes, maxOutboundBytes: DINGTALK_LIMITS.maxUploadBytes },
    // Groups deliver only messages that @-mention the robot.
    groupTrigger: 'mention',
    runMode: 'stream',
    // Reference §6.0: bindings hold per group conversation, P2P ones (no workspace) count everywhere.
    identityFallsBackToNoWorkspace: true,
  };
}

/**
 * The DingTalk adapter: Stream mode in (no public URL), robot messages or AI cards out, files
 * both ways.
 *
 * @throws ConfigError when `client_id` or `client_secret` is missing.
 */
export function createDingTalkChannel(config: DingTalkConfig, deps: ChannelDeps): ChannelAdapter {
  const missing = [
    ...(config.client_id === undefined ? ['channels.dingtalk.client_id: required when the DingTalk channel is enabled'] : []),
    ...(config.client_secret === undefined ? ['channels.dingtalk.client_secret: required when the DingTalk channel is enabled'] : []),
  ];
  if (missing.length > 0) throw new ConfigError(missing);
  const clientId = config.client_id as string;
  const clientSecret = config.client_secret as string;
  const logger = deps.logger.child({ channel: 'dingtalk' });
  const api = new DingTalkApi({ apiUrl: config.api_url, clientId, clientSecret, now: deps.now });
  const sessions = new SessionWebhooks();
  const sender = new RobotSender(api, sessions, deps.now);
  const cards = config.card_template_id === '' ? undefined : new CardApi(api, config.card_template_id);
  const gate = deps.rateGate('chat');
  const ingress = new DingTalkIngress({
    apiUrl: config.api_url,
    clientId,
    clientSecret,
    allowedUsers: config.allowed_users,
    deps,
    logger,
    sender,
    sessions,
    ...(cards ? { cards } : {}),
  });
  return {
    name: 'dingtalk',
    displayName: 'DingTalk',
    capabilities: dingtalkCapabilities(cards !== undefined),
    egress: createDingTalkEgress({ sender, ...(cards ? { cards } : {}), gate, logger, now: deps.now }),
    files: createDingTalkFiles(api, sender),
    start: () => ingress.start(),
    stop: () => ingress.stop(),
    status: () => ingress.status(),
  };
}
