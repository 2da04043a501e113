import type { FastifyPluginAsync } from 'fastify';
import type { ChannelRoutes } from '../types.js';
import { assertChannelNames } from './webhooks/index.js';

/**
 * Mounts each channel's person routes (`ChannelAdapter.personRoutes`: the web chat's) at `/<name>`
 * (this plugin sits at `/api/chat`), each in its own context. Unlike webhooks they are not public:
 * the gateway's deny-by-default rule applies, so a handler finds the caller in `request.principal`.
 *
 * @throws ConfigError when a name is not `[a-z0-9-]+` or appears twice.
 */
export const chatRoutes: FastifyPluginAsync<{ channels: ChannelRoutes[] }> = async (app, { channels }) => {
  assertChannelNames(channels, 'personRoutes');
  for (const { name, routes } of channels) await app.register(routes, { prefix: `/${name}` });
};
