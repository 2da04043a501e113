import type { ChannelDefinition } from '../../src/channel/types.js';
import { type GitHubConfig, githubConfigSchema } from './config.js';

export type { GitHubConfig } from './config.js';
export { githubConfigSchema } from './config.js';

/** What the registry (`channels/index.ts`) knows of GitHub before the channel is enabled: no SDK is loaded for it. */
export const githubChannel: ChannelDefinition<GitHubConfig> = {
  name: 'github',
  displayName: 'GitHub',
  configSchema: githubConfigSchema,
  // A configured secret keeps the route up while disabled, so the kill switch answers GitHub 200.
  isEnabled: (config) => config.enabled || config.webhook_secret !== undefined,
  // Its agents act with `gh` on an installation token handed to this server's sandbox alone.
  needsEmbeddedRuntime: (config) => config.enabled,
  // The SDK loads with the adapter, so a server without this channel never pays for it.
  create: async (config, deps) => (await import('./adapter.js')).createGitHubChannel(config, deps),
};
