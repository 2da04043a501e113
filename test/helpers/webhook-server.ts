import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyPluginAsync } from 'fastify';
import { webhookRoutes } from '../../src/gateway/routes/webhooks/index.js';

/**
 * Serves a channel's webhook routes as core mounts them (`/api/webhooks/<name>` through the
 * webhooks plugin) on a listening Fastify on 127.0.0.1. Resolves with their URL and a `close`.
 */
export async function serveWebhookRoutes(name: string, routes: FastifyPluginAsync): Promise<{ url: string; close: () => Promise<void> }> {
  const app = Fastify();
  await app.register(webhookRoutes, { prefix: '/api/webhooks', channels: [{ name, routes }] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api/webhooks/${name}`, close: () => app.close() };
}
