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

/** `GET/PUT/DELETE /threads/:thread_id/goal` (at `/api`): a thread's active goal. */
export const goalRoutes: ZodPluginAsync<{ runtime: AgentRuntime }> = async (app, { runtime }) => {
  app.addHook('preHandler', threadOwnershipCheck(runtime));
  const params = threadParamsSchema;
  const response = { 200: goalResponseSchema, ...errorResponses };

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
