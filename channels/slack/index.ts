import type { ChannelDefinition } from '../../src/channel/types.js';
import { type SlackConfig, slackConfigSchema } from './config.js';

export type { SlackConfig } from './config.js';
export { slackConfigSchema } from './config.js';

/** What the registry (`channels/index.ts`) knows of Slack before the channel is enabled: no SDK is loaded for it. */
export const slackChannel: ChannelDefinition<SlackConfig> = {
  name: 'slack',
  displayName: 'Slack',
  configSchema: slackConfigSchema,
  isEnabled: (config) => config.enabled,
  // The SDK loads with the adapter, so a server without this channel never pays for it.
  create: async (config, deps) => (await import('./adapter.js')).createSlackChannel(config, deps),
};
