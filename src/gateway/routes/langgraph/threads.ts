import type { AgentRuntime } from '../../../runtime/types.js';
import { errorResponses } from '../../error-handler.js';
import type { ZodPluginAsync } from '../../validation.js';
import { createThreadBodySchema, threadParamsSchema, threadSchema } from './schemas.js';

/** `POST /threads` and `GET /threads/:thread_id`. */
export const threadRoutes: ZodPluginAsync<{ runtime: AgentRuntime }> = async (app, { runtime }) => {
  app.post(
    '/threads',
    { schema: { body: createThreadBodySchema, response: { 200: threadSchema, ...errorResponses } } },
    async (request) => runtime.createThread(request.body),
  );

  app.get(
    '/threads/:thread_id',
    { schema: { params: threadParamsSchema, response: { 200: threadSchema, ...errorResponses } } },
    async (request) => runtime.getThread(request.params.thread_id),
  );
};
