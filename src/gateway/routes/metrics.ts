import type { FastifyPluginAsync } from 'fastify';
import { requireOperator } from '../auth.js';

/**
 * `GET /metrics`: Prometheus exposition text. Counts and channel names only: no message text, ids
 * or secrets. Unless the operator made it public (`server.metrics_public`), it is the operator's:
 * 401 without a key where keys are required, 403 for a user's key.
 */
export const metricsRoutes: FastifyPluginAsync<{ render: () => Promise<{ contentType: string; body: string }>; isPublic: boolean }> = async (
  app,
  { render, isPublic },
) => {
  app.get('/metrics', { config: { isPublic } }, async (request, reply) => {
    if (!isPublic && request.principal !== undefined) requireOperator(request);
    const { contentType, body } = await render();
    return reply.type(contentType).send(body);
  });
};
