import { Client, GatewayIntentBits, Partials, REST } from 'discord.js';
import type { ChannelAdapter, ChannelCapabilities, ChannelDeps } from '../../src/channel/types.js';
import { ConfigError } from '../../src/errors.js';
import { DiscordApi } from './api.js';
import type { DiscordConfig } from './config.js';
import { createDiscordEgress } from './egress.js';
import { createDiscordFiles } from './files.js';
import { DiscordIngress } from './ingress.js';
import { DISCORD_LIMITS } from './limits.js';
import { ThreadMap } from './threads.js';
import { TypingIndicators } from './typing.js';

/** What core needs to know about Discord, as data. */
export const DISCORD_CAPABILITIES: ChannelCapabilities = {
  streaming: 'edit',
  maxMessageChars: DISCORD_LIMITS.maxMessageChars,
  hasThreads: true,
  files: { maxInboundBytes: DISCORD_LIMITS.maxDownloadBytes, maxOutboundBytes: DISCORD_LIMITS.maxUploadBytes },
  groupTrigger: 'configurable',
  runMode: 'stream',
  // Binding in a DM carries no guild; reference §6.0 lets it hold in every server.
  identityFallsBackToNoWorkspace: true,
};

/** Retries of one REST call on 5xx and network errors, inside discord.js (429s are waited out without limit). */
const REST_RETRIES = 3;
/** Bound on one REST request, in ms. */
const REST_TIMEOUT_MS = 15_000;

/**
 * The Discord adapter: the discord.js gateway in, REST out (edited messages, reactions, typing,
 * threads, attachments).
 *
 * @throws ConfigError when `bot_token` is missing.
 */
export function createDiscordChannel(config: DiscordConfig, deps: ChannelDeps): ChannelAdapter {
  if (config.bot_token === undefined) {
    throw new ConfigError(['channels.discord.bot_token: required when the Discord channel is enabled']);
  }
  const logger = deps.logger.child({ channel: 'discord' });
  const restOptions = { api: config.api_url, retries: REST_RETRIES, timeout: REST_TIMEOUT_MS };
  const createClient = () =>
    new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages],
      // DMs arrive for channels discord.js has not cached (sdk-recipes §3).
      partials: [Partials.Channel],
      allowedMentions: { parse: [] },
      rest: restOptions,
    });
  // Egress has its own REST client: it works before, without and after the gateway's login (a
  // destroyed gateway client forgets its token; a standby process never logs in).
  const api = new DiscordApi(new REST(restOptions).setToken(config.bot_token));
  const gate = deps.rateGate('chat');
  const typing = new TypingIndicators({ trigger: (channelId) => api.typing(channelId), logger });
  const ingress = new DiscordIngress({
    createClient,
    token: config.bot_token,
    api,
    threads: new ThreadMap(deps.state, api, logger),
    typing,
    deps: { ...deps, logger },
    allowedUsers: config.allowed_users,
    routing: {
      mentionOnly: config.mention_only,
      threadMode: config.thread_mode,
      allowedGuilds: new Set(config.allowed_guilds),
      allowedChannels: new Set(config.allowed_channels),
    },
  });
  return {
    name: 'discord',
    displayName: 'Discord',
    capabilities: DISCORD_CAPABILITIES,
    // A second gateway session would receive every event again.
    exclusiveIngress: true,
    egress: createDiscordEgress({ api, gate, typing, logger, now: deps.now }),
    files: createDiscordFiles({ api, gate, logger }),
    start: () => ingress.start(),
    stop: () => ingress.stop(),
    status: () => ingress.status(),
  };
}
