import type { ChannelAdapter, ChannelCapabilities, ChannelDeps } from '../../src/channel/types.js';
import { IlinkClient } from './api.js';
import type { WeChatConfig } from './config.js';
import { ContextTokens } from './context-tokens.js';
import { createWeChatEgress } from './egress.js';
import { createWeChatFiles } from './files.js';
import { WeChatIngress } from './ingress.js';
import { WECHAT_LIMITS } from './limits.js';
import { QrLogin } from './login.js';
import { WeChatSender } from './sender.js';

/** What core needs to know about WeChat, as data; file sizes as configured (the larger of images and files). */
export function wechatCapabilities(config: WeChatConfig): ChannelCapabilities {
  return {
    // iLink has no edits: only the final is sent, after a standing acknowledgement.
    streaming: 'none',
    maxMessageChars: WECHAT_LIMITS.maxMessageChars,
    hasThreads: false,
    files: {
      maxInboundBytes: Math.max(config.max_inbound_image_bytes, config.max_inbound_file_bytes),
      maxOutboundBytes: Math.max(config.max_outbound_image_bytes, config.max_outbound_file_bytes),
    },
    // The iLink bot talks one to one; there are no group chats to trigger in.
    groupTrigger: 'every-message',
    runMode: 'wait',
  };
}

/**
 * The WeChat adapter: iLink `getupdates` long polling in, `sendmessage` out.
 *
 * @throws ConfigError (from the schema) when neither `bot_token` nor `qrcode_login_enabled` is set.
 */
export function createWeChatChannel(config: WeChatConfig, deps: ChannelDeps): ChannelAdapter {
  const logger = deps.logger.child({ channel: 'wechat' });
  const client = new IlinkClient({
    baseUrl: config.base_url,
    ...(config.bot_token === undefined ? {} : { token: config.bot_token }),
    channelVersion: config.channel_version,
    appId: config.ilink_app_id,
    ...(config.route_tag === undefined ? {} : { routeTag: config.route_tag }),
  });
  const contextTokens = new ContextTokens(deps.state);
  const sender = new WeChatSender(client, contextTokens);
  const gate = deps.rateGate('chat');
  // Without a configured token the QR-code login gives one (the schema requires state_dir then).
  const qrLogin =
    config.bot_token === undefined && config.qrcode_login_enabled && config.state_dir !== undefined
      ? new QrLogin({
          client,
          stateDir: config.state_dir,
          botType: config.qrcode_bot_type,
          pollIntervalMs: config.qrcode_poll_interval * 1000,
          timeoutMs: config.qrcode_poll_timeout * 1000,
          logger,
          now: deps.now,
        })
      : undefined;
  const ingress = new WeChatIngress({
    client,
    sender,
    contextTokens,
    deps,
    logger,
    gate,
    allowedUsers: config.allowed_users,
    pollingTimeoutMs: config.polling_timeout * 1000,
    pollingRetryDelayMs: config.polling_retry_delay * 1000,
    respectServerLongPollTimeout: config.respect_server_longpoll_timeout,
    ...(qrLogin ? { login: (signal: AbortSignal) => qrLogin.login(signal), onSessionExpired: () => qrLogin.forget() } : {}),
  });
  return {
    name: 'wechat',
    displayName: 'WeChat',
    capabilities: wechatCapabilities(config),
    // One cursor per bot: two pollers would each take the other's messages.
    exclusiveIngress: true,
    egress: createWeChatEgress({ sender, gate, logger, now: deps.now }),
    files: createWeChatFiles({
      client,
      sender,
      cdnBaseUrl: config.cdn_base_url,
      limits: {
        maxInboundImageBytes: config.max_inbound_image_bytes,
        maxOutboundImageBytes: config.max_outbound_image_bytes,
        maxInboundFileBytes: config.max_inbound_file_bytes,
        maxOutboundFileBytes: config.max_outbound_file_bytes,
        allowedExtensions: new Set(config.allowed_file_extensions),
      },
    }),
    start: () => ingress.start(),
    stop: () => ingress.stop(),
    status: () => ingress.status(),
  };
}
