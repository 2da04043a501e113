import { z } from 'zod';
import { PUBLIC_ROUTE } from '../auth.js';
import { errorResponses } from '../error-handler.js';
import type { HealthReport } from '../types.js';
import type { ZodPluginAsync } from '../validation.js';

export const healthReportSchema = z.object({
  ok: z.boolean(),
  database: z.object({ ok: z.boolean(), kind: z.string(), error: z.string().optional() }),
  bus: z.object({ ok: z.boolean(), kind: z.enum(['in-process', 'redis']), error: z.string().optional() }),
  channels: z.record(z.string(), z.object({ running: z.boolean(), standby: z.boolean().optional(), reason: z.string().optional() })),
  model: z.object({
    configured: z.boolean(),
    models: z.array(z.string()),
    checks: z
      .record(
        z.string(),
        z.object({
          status: z.enum(['pending', 'ok', 'unreachable', 'key_refused', 'model_missing', 'unverified', 'error']),
          detail: z.string(),
          checked_at: z.string().nullable(),
        }),
      )
      .optional(),
  }),
  runtime: z
    .discriminatedUnion('kind', [z.object({ kind: z.literal('embedded') }), z.object({ kind: z.literal('remote'), host: z.string() })])
    .optional(),
  sandbox: z
    .object({ isolation: z.enum(['bubblewrap', 'none']), isExplicit: z.boolean(), reason: z.string().optional() })
    .optional(),
  outbox: z.object({ pending: z.number().int(), dead: z.number().int() }).optional(),
  mcp: z
    .record(
      z.string(),
      z.object({
        state: z.enum(['connecting', 'ready', 'failed']),
        tools: z.number().int(),
        access: z.enum(['trusted', 'everyone']),
        reason: z.string().optional(),
      }),
    )
    .optional(),
});

/** Other query parameters are ignored, as a probe may add its own; `check` names what to check afresh. */
const healthQuerySchema = z.object({ check: z.enum(['models']).optional() });

/**
 * `GET /health`: the report with 200 when `ok`, 503 when not (so load balancers take us out).
 * `?check=models` checks every model first; public like the rest of the report, as the check is
 * shared and runs at most once per 10 s however often it is asked for.
 */
export const healthRoutes: ZodPluginAsync<{ health: (options?: { checkModels?: boolean }) => Promise<HealthReport> }> = async (app, { health }) => {
  app.get(
    '/health',
    { config: PUBLIC_ROUTE, schema: { querystring: healthQuerySchema, response: { 200: healthReportSchema, 400: errorResponses['4xx'], 503: healthReportSchema } } },
    async (request, reply) => {
      const report = await health({ checkModels: request.query.check === 'models' });
      return reply.status(report.ok ? 200 : 503).send(report);
    },
  );
};
