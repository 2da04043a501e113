import type { ChannelDefinition } from '../../src/channel/types.js';
import { type WeChatConfig, wechatConfigSchema } from './config.js';

export type { WeChatConfig } from './config.js';
export { wechatConfigSchema } from './config.js';

/** What the registry (`channels/index.ts`) knows of WeChat before the channel is enabled: the adapter loads only then. */
export const wechatChannel: ChannelDefinition<WeChatConfig> = {
  name: 'wechat',
  displayName: 'WeChat',
  configSchema: wechatConfigSchema,
  isEnabled: (config) => config.enabled,
  // Loaded with the adapter, so a server without this channel never pays for it.
  create: async (config, deps) => (await import('./adapter.js')).createWeChatChannel(config, deps),
};
