import type { ChannelDefinition } from '../../src/channel/types.js';
import { type DingTalkConfig, dingtalkConfigSchema } from './config.js';

export type { DingTalkConfig } from './config.js';
export { dingtalkConfigSchema } from './config.js';

/** What the registry (`channels/index.ts`) knows of DingTalk before the channel is enabled: no SDK is loaded for it. */
export const dingtalkChannel: ChannelDefinition<DingTalkConfig> = {
  name: 'dingtalk',
  displayName: 'DingTalk',
  configSchema: dingtalkConfigSchema,
  isEnabled: (config) => config.enabled,
  // The SDK loads with the adapter, so a server without this channel never pays for it.
  create: async (config, deps) => (await import('./adapter.js')).createDingTalkChannel(config, deps),
};
