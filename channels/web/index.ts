import type { ChannelDefinition } from '../../src/channel/types.js';
import { type WebConfig, webConfigSchema } from './config.js';

export type { WebConfig } from './config.js';
export { webConfigSchema } from './config.js';

/** The web chat: the console's chat page, hosted by this server (no platform, no SDK). */
export const webChannel: ChannelDefinition<WebConfig> = {
  name: 'web',
  displayName: 'Web chat',
  configSchema: webConfigSchema,
  isEnabled: (config) => config.enabled,
  create: async (config, deps) => (await import('./adapter.js')).createWebChannel(config, deps),
};
