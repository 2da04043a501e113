import type { FastifyPluginAsync } from 'fastify';
import { ConfigError } from '../../../errors.js';
import type { ChannelRoutes } from '../../types.js';

const CHANNEL_NAME = /^[a-z0-9-]+$/;

/**
 * Checks that each channel's routes can be mounted at `/<name>`: names are `[a-z0-9-]+`, none twice.
 *
 * @throws ConfigError naming each bad one under `list`.
 */
export function assertChannelNames(channels: readonly ChannelRoutes[], list: string): void {
  const bad = channels
    .map(({ name }, index) => ({ name, index }))
    .filter(({ name, index }) => !CHANNEL_NAME.test(name) || channels.findIndex((c) => c.name === name) !== index)
    .map(({ name }) => `${list}.${JSON.stringify(name)}: must be a unique [a-z0-9-]+ name`);
  if (bad.length > 0) throw new ConfigError(bad);
}

/**
 * Mounts each channel's webhook routes at `/<name>` (this plugin sits at `/api/webhooks`), each in
 * its own context, so a channel's raw-body parser or `bodyLimit` never reaches another route. It
 * names no platform: the caller passes only the enabled channels. Every route in here is public:
 * a webhook proves itself by its platform's signature, which its channel checks.
 *
 * @throws ConfigError when a name is not `[a-z0-9-]+` or appears twice.
 */
export const webhookRoutes: FastifyPluginAsync<{ channels: ChannelRoutes[] }> = async (app, { channels }) => {
  assertChannelNames(channels, 'channelRoutes');
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, isPublic: true };
  });
  for (const { name, routes, ready } of channels) {
    await app.register(
      async (channel) => {
        // Before the body is read, so a delivery that waits costs a socket, not its payload.
        if (ready !== undefined) channel.addHook('onRequest', async () => ready());
        await channel.register(routes);
      },
      { prefix: `/${name}` },
    );
  }
};
