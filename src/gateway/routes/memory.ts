import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import { type AgentRuntime, DEFAULT_USER_ID } from '../../runtime/types.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';


const memoryQuerySchema = z.strictObject({
  user_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/, 'letters, digits, _ and - only')
    .optional()
    .describe('Storage user id; absent means `default`.'),
});

const memorySchema = z.object({
  user_id: z.string(),
  summaries: z.object({ work_context: z.string(), personal_context: z.string(), top_of_mind: z.string() }),
  facts: z.array(
    z.object({
      id: z.string(),
      content: z.string(),
      category: z.string(),
      confidence: z.number(),
      source: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
});

/**
 * Whose memory a request means: a signed-in user always their own; the operator or an
 * unauthenticated single-user server the `user_id` asked for, else `default`.
 */
function memoryUserOf(request: FastifyRequest, query: z.infer<typeof memoryQuerySchema>): string {
  const principal = request.principal;
  if (principal?.kind === 'user') return principal.user.id;
  return query.user_id ?? DEFAULT_USER_ID;
}

const factParamsSchema = z.strictObject({
  fact_id: z.string().uuid('a fact id (a UUID, as `GET /api/memory` lists it)'),
});

/**
 * `GET /memory`, `DELETE /memory` and `DELETE /memory/facts/:fact_id` (at `/api`): what the
 * server remembers about a user, all of it forgotten at once or one fact at a time. A signed-in
 * user only ever reaches their own memory, whatever `user_id` says; another's fact is a 404.
 */
export const memoryRoutes: ZodPluginAsync<{ runtime: AgentRuntime }> = async (app, { runtime }) => {
  app.get(
    '/memory',
    { schema: { querystring: memoryQuerySchema, response: { 200: memorySchema, ...errorResponses } } },
    async (request) => runtime.getMemory(memoryUserOf(request, request.query)),
  );

  app.delete(
    '/memory',
    { schema: { querystring: memoryQuerySchema, response: { 200: z.object({ removed: z.number() }), ...errorResponses } } },
    async (request) => ({ removed: await runtime.clearMemory(memoryUserOf(request, request.query)) }),
  );

  app.delete(
    '/memory/facts/:fact_id',
    {
      schema: {
        params: factParamsSchema,
        querystring: memoryQuerySchema,
        response: { 200: z.object({ removed: z.literal(1) }), ...errorResponses },
      },
    },
    async (request) => {
      const isRemoved = await runtime.deleteMemoryFact(memoryUserOf(request, request.query), request.params.fact_id);
      if (!isRemoved) throw new NotFoundError('Fact');
      return { removed: 1 as const };
    },
  );
};
