import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
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

/** `GET /memory` and `DELETE /memory` (at `/api`): what the server remembers about a user. */
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
};
