import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { goalJsonSchema, MAX_CONTINUATIONS } from '../../agent/goals/index.js';
import type { AgentRuntime } from '../../runtime/types.js';
import { errorResponses } from '../error-handler.js';
import { threadOwnershipCheck } from '../thread-ownership.js';
import type { ZodPluginAsync } from '../validation.js';
import { threadParamsSchema } from './langgraph/schemas.js';

const goalResponseSchema = z.object({ goal: goalJsonSchema.nullable() });

/**
 * Objective length is checked by the goal store after whitespace is normalised, so it answers 422
 * with the limit; the body schema only keeps out what is not an objective at all.
 */
const setGoalBodySchema = z.strictObject({
  objective: z.string(),
  max_continuations: z.number().int().optional().describe(`0..${MAX_CONTINUATIONS}; more is refused with 422.`),
});

const goalsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  user_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/, 'letters, digits, _ and - only')
    .optional()
    .describe("The operator's filter: only this account's threads. A signed-in user always gets their own."),
});

/** What the goal loop last did: none yet, still working on it, or stopped until the person speaks. */
const GOAL_STATUS = { continued: 'continuing', stood_down: 'stood_down' } as const;

const threadGoalSchema = z.object({
  thread_id: z.string(),
  conversation: z.object({ provider: z.string(), chat_id: z.string() }).nullable().describe('Where the thread posts; null for an API thread.'),
  status: z.enum(['new', 'continuing', 'stood_down']),
  goal: goalJsonSchema,
});

/**
 * Whose goals `GET /goals` lists: a signed-in user's own threads, whatever the query says; the
 * operator's (or a server without keys) every thread, or one account's with `user_id`.
 */
function goalOwnerOf(request: FastifyRequest, query: z.infer<typeof goalsQuerySchema>): string | undefined {
  return request.principal?.kind === 'user' ? request.principal.user.id : query.user_id;
}

/**
 * `GET /goals` and `GET/PUT/DELETE /threads/:thread_id/goal` (at `/api`): the threads with an
 * active goal, and one thread's goal. A signed-in user reaches only their own threads.
 */
export const goalRoutes: ZodPluginAsync<{ runtime: AgentRuntime }> = async (app, { runtime }) => {
  app.addHook('preHandler', threadOwnershipCheck(runtime));
  const params = threadParamsSchema;
  const response = { 200: goalResponseSchema, ...errorResponses };

  app.get(
    '/goals',
    { schema: { querystring: goalsQuerySchema, response: { 200: z.object({ goals: z.array(threadGoalSchema) }), ...errorResponses } } },
    async (request) => {
      const ownerUserId = goalOwnerOf(request, request.query);
      const found = await runtime.listGoals({ limit: request.query.limit, ...(ownerUserId === undefined ? {} : { ownerUserId }) });
      return {
        goals: found.map((entry) => {
          const action = entry.goal.last_evaluation?.action;
          return { ...entry, status: action === 'continued' || action === 'stood_down' ? GOAL_STATUS[action] : ('new' as const) };
        }),
      };
    },
  );

  app.get('/threads/:thread_id/goal', { schema: { params, response } }, async (request) => ({
    goal: await runtime.getGoal(request.params.thread_id),
  }));

  app.put('/threads/:thread_id/goal', { schema: { params, body: setGoalBodySchema, response } }, async (request) => ({
    goal: await runtime.setGoal(request.params.thread_id, request.body),
  }));

  app.delete('/threads/:thread_id/goal', { schema: { params, response } }, async (request) => {
    await runtime.clearGoal(request.params.thread_id);
    return { goal: null };
  });
};
