import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { HistoryPoint } from '../../metrics-history.js';
import { requireOperator } from '../auth.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

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

/** What the history route reads: the sampler's points and its interval. */
export interface MetricsHistorySource {
  intervalSeconds: number;
  since(windowMs: number): HistoryPoint[];
}

const countSchema = z.number().int().nonnegative();
const pointSchema = z.object({
  at: z.string(),
  seconds: z.number().nonnegative(),
  answered: countSchema,
  failed: countSchema,
  channels: z.record(z.string(), z.object({ answered: countSchema, failed: countSchema })),
  latency: z.object({ p50_seconds: z.number().nullable(), p95_seconds: z.number().nullable() }),
  errors: z.object({ delivery_retries: countSchema, dead_letters: countSchema, refused: countSchema, total: countSchema }),
});

function toPointJson(point: HistoryPoint): z.infer<typeof pointSchema> {
  return {
    at: new Date(point.at).toISOString(),
    seconds: point.seconds,
    answered: point.answered,
    failed: point.failed,
    channels: point.channels,
    latency: { p50_seconds: point.latency.p50Seconds, p95_seconds: point.latency.p95Seconds },
    errors: {
      delivery_retries: point.errors.deliveryRetries,
      dead_letters: point.errors.deadLetters,
      refused: point.errors.refused,
      total: point.errors.total,
    },
  };
}

/** Before the query is read: a user's key gets 403 whatever it asks. */
async function operatorOnly(request: FastifyRequest): Promise<void> {
  if (request.principal?.kind === 'user') requireOperator(request);
}

/**
 * `GET /metrics/history?hours=` (at `/api`), for the operator: the console's charts, one point per
 * sampling interval over the last `hours` (default and most 6), oldest first. Kept in this
 * process's memory only: a restart starts empty, and each process of a scaled-out deployment
 * answers with its own.
 */
export const metricsHistoryRoutes: ZodPluginAsync<{ history: MetricsHistorySource }> = async (app, { history }) => {
  app.get(
    '/metrics/history',
    {
      onRequest: operatorOnly,
      schema: {
        querystring: z.strictObject({
          hours: z.coerce.number({ error: 'must be a number of hours' }).positive('must be more than 0').max(6, 'must be at most 6 (the history keeps 6 hours)').default(6),
        }),
        response: { 200: z.object({ interval_seconds: z.number(), hours: z.number(), points: z.array(pointSchema) }), ...errorResponses },
      },
    },
    async (request) => ({
      interval_seconds: history.intervalSeconds,
      hours: request.query.hours,
      points: history.since(request.query.hours * 60 * 60 * 1000).map(toPointJson),
    }),
  );
};
