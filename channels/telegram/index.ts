import type { ChannelDefinition } from '../../src/channel/types.js';
import { type TelegramConfig, telegramConfigSchema } from './config.js';

export type { TelegramConfig } from './config.js';
export { telegramConfigSchema } from './config.js';

/** What the registry (`channels/index.ts`) knows of Telegram before the channel is enabled: no SDK is loaded for it. */
export const telegramChannel: ChannelDefinition<TelegramConfig> = {
  name: 'telegram',
  displayName: 'Telegram',
  // Reference §8.1: Telegram binds through a deep link that opens the bot with `/start <code>`.
  binding: {
    mode: 'deep_link',
    missing: (settings) =>
      settings.bot_username === undefined ? 'Set channel_connections.telegram.bot_username to offer Telegram connections.' : undefined,
    offer: (code, settings) => ({
      mode: 'deep_link',
      url: `https://t.me/${settings.bot_username}?start=${code}`,
      instruction: `Send /start ${code} to the DeerFlow Telegram bot.`,
    }),
  },
  configSchema: telegramConfigSchema,
  isEnabled: (config) => config.enabled,
  // The SDK loads with the adapter, so a server without this channel never pays for it.
  create: async (config, deps) => (await import('./adapter.js')).createTelegramChannel(config, deps),
};
