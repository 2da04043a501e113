import type { ChannelAdapter, ChannelCapabilities, ChannelDeps } from '../../src/channel/types.js';
import { ConfigError } from '../../src/errors.js';
import { FeishuApi } from './api.js';
import { AppBudget } from './budget.js';
import { CardRegistry } from './cards.js';
import type { FeishuConfig } from './config.js';
import { createFeishuEgress } from './egress.js';
import { createFeishuFiles } from './files.js';
import { FeishuIngress } from './ingress.js';
import { FEISHU_LIMITS } from './limits.js';
import { GroupTopics } from './topics.js';
import { createFeishuRoutes } from './webhook/routes.js';

/** What core needs to know about Feishu/Lark, as data. */
export const FEISHU_CAPABILITIES: ChannelCapabilities = {
  // One card updated in place: CardKit streaming, else a patched interactive card.
  streaming: 'card',
  maxMessageChars: FEISHU_LIMITS.maxMessageChars,
  hasThreads: true,
  files: { maxInboundBytes: FEISHU_LIMITS.maxDownloadBytes, maxOutboundBytes: FEISHU_LIMITS.maxFileBytes },
  // Group messages arrive only when they @mention the bot (unless the app has im:message.group_msg).
  groupTrigger: 'mention',
  runMode: 'stream',
  // Reference §4.7: a message for a busy thread waits its turn ("Queued behind another request…").
  serializesThreadRuns: true,
};

/**
 * The Feishu/Lark adapter: the long connection (or HTTP callbacks at `/api/webhooks/feishu`) in,
 * one patched card per reply out, files both ways.
 *
 * @throws ConfigError when `app_id`/`app_secret` are missing, or `encrypt_key` in `http` mode.
 */
export function createFeishuChannel(config: FeishuConfig, deps: ChannelDeps): ChannelAdapter {
  const missing = [
    ...(config.app_id === undefined ? ['channels.feishu.app_id: required when the Feishu channel is enabled'] : []),
    ...(config.app_secret === undefined ? ['channels.feishu.app_secret: required when the Feishu channel is enabled'] : []),
    ...(config.mode === 'http' && config.encrypt_key === undefined ? ['channels.feishu.encrypt_key: required for HTTP callbacks'] : []),
  ];
  if (missing.length > 0) throw new ConfigError(missing);
  const appId = config.app_id as string;
  const appSecret = config.app_secret as string;
  const logger = deps.logger.child({ channel: 'feishu' });
  const api = new FeishuApi({ appId, appSecret, domain: config.domain, logger, budget: new AppBudget(FEISHU_LIMITS.appCallsPerMethod.map((limit) => deps.requestWindow(limit.name, limit.perWindow, limit.windowMs))) });
  const cards = new CardRegistry(deps.state, logger);
  const pacer = deps.requestWindow('chat', FEISHU_LIMITS.sendsPerChatPerSecond, 1000);
  const topics = new GroupTopics(deps.state, logger, deps.now);
  const ingress = new FeishuIngress({
    api,
    deps: { ...deps, logger },
    appId,
    appSecret,
    domain: config.domain,
    mode: config.mode,
    allowedUsers: config.allowed_users,
    runningText: config.running_text,
    pacer,
    topics,
    ...(config.cardkit ? { cards } : {}),
  });
  return {
    name: 'feishu',
    displayName: 'Feishu',
    capabilities: FEISHU_CAPABILITIES,
    egress: createFeishuEgress({ api, gate: deps.rateGate('chat'), pacer, cards, topics, logger, now: deps.now }),
    files: createFeishuFiles({ api, pacer, logger }),
    start: () => ingress.start(),
    stop: () => ingress.stop(),
    status: () => ingress.status(),
    ...(config.mode === 'http'
      ? {
          routes: createFeishuRoutes({
            encryptKey: config.encrypt_key as string,
            ...(config.verification_token === undefined ? {} : { verificationToken: config.verification_token }),
            now: deps.now,
            windowMs: FEISHU_LIMITS.callbackWindowMs,
            dispatch: (event, sentAt) => ingress.dispatchCallback(event, sentAt),
            logger,
          }),
        }
      : {}),
  };
}
