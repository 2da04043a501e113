import type { ChannelDefinition } from '../../src/channel/types.js';
import { type WeComConfig, wecomConfigSchema } from './config.js';

export type { WeComConfig } from './config.js';
export { wecomConfigSchema } from './config.js';

/** What the registry (`channels/index.ts`) knows of WeCom before the channel is enabled: no SDK is loaded for it. */
export const wecomChannel: ChannelDefinition<WeComConfig> = {
  name: 'wecom',
  displayName: 'WeCom',
  configSchema: wecomConfigSchema,
  isEnabled: (config) => config.enabled,
  // The SDK loads with the adapter, so a server without this channel never pays for it.
  create: async (config, deps) => (await import('./adapter.js')).createWeComChannel(config, deps),
};
