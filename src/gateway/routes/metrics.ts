import type { FastifyPluginAsync } from 'fastify';

/** `GET /metrics`: Prometheus exposition text. Counts and channel names only: no message text, ids or secrets. */
export const metricsRoutes: FastifyPluginAsync<{ render: () => Promise<{ contentType: string; body: string }> }> = async (app, { render }) => {
  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await render();
    return reply.type(contentType).send(body);
  });
};
