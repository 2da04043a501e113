import { z } from 'zod';
import { PUBLIC_ROUTE } from '../auth.js';
import type { HealthReport } from '../types.js';
import type { ZodPluginAsync } from '../validation.js';

export const healthReportSchema = z.object({
  ok: z.boolean(),
  database: z.object({ ok: z.boolean(), kind: z.string(), error: z.string().optional() }),
  bus: z.object({ ok: z.boolean(), kind: z.enum(['in-process', 'redis']), error: z.string().optional() }),
  channels: z.record(z.string(), z.object({ running: z.boolean(), standby: z.boolean().optional(), reason: z.string().optional() })),
  model: z.object({ configured: z.boolean(), models: z.array(z.string()) }),
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

/** `GET /health`: the report with 200 when `ok`, 503 when not (so load balancers take us out). */
export const healthRoutes: ZodPluginAsync<{ health: () => Promise<HealthReport> }> = async (app, { health }) => {
  app.get('/health', { config: PUBLIC_ROUTE, schema: { response: { 200: healthReportSchema, 503: healthReportSchema } } }, async (_request, reply) => {
    const report = await health();
    return reply.status(report.ok ? 200 : 503).send(report);
  });
};
