import type { ChannelDefinition } from '../../src/channel/types.js';
import { type DiscordConfig, discordConfigSchema } from './config.js';

export type { DiscordConfig } from './config.js';
export { discordConfigSchema } from './config.js';

/** What the registry (`channels/index.ts`) knows of Discord before the channel is enabled: no SDK is loaded for it. */
export const discordChannel: ChannelDefinition<DiscordConfig> = {
  name: 'discord',
  displayName: 'Discord',
  configSchema: discordConfigSchema,
  isEnabled: (config) => config.enabled,
  // The SDK loads with the adapter, so a server without this channel never pays for it.
  create: async (config, deps) => (await import('./adapter.js')).createDiscordChannel(config, deps),
};
