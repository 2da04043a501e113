import type { ChannelDefinition } from '../../src/channel/types.js';
import { type FeishuConfig, feishuConfigSchema } from './config.js';

export type { FeishuConfig } from './config.js';
export { feishuConfigSchema } from './config.js';

/** What the registry (`channels/index.ts`) knows of Feishu before the channel is enabled: no SDK is loaded for it. */
export const feishuChannel: ChannelDefinition<FeishuConfig> = {
  name: 'feishu',
  displayName: 'Feishu',
  configSchema: feishuConfigSchema,
  isEnabled: (config) => config.enabled,
  // The SDK loads with the adapter, so a server without this channel never pays for it.
  create: async (config, deps) => (await import('./adapter.js')).createFeishuChannel(config, deps),
};
