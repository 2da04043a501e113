import { ConflictError } from '../../../errors.js';
import type { AgentRuntime } from '../../../runtime/types.js';
import { OWNER_METADATA_KEY } from '../../thread-ownership.js';
import { errorResponses } from '../../error-handler.js';
import type { ZodPluginAsync } from '../../validation.js';
import { createThreadBodySchema, threadParamsSchema, threadSchema } from './schemas.js';

/** `POST /threads` and `GET /threads/:thread_id`. */
export const threadRoutes: ZodPluginAsync<{ runtime: AgentRuntime }> = async (app, { runtime }) => {
  app.post(
    '/threads',
    { schema: { body: createThreadBodySchema, response: { 200: threadSchema, ...errorResponses } } },
    async (request) => {
      const principal = request.principal;
      if (principal?.kind !== 'user') return runtime.createThread(request.body);
      // A user's threads carry their account; someone else's thread id is never handed back.
      const thread = await runtime.createThread({
        ...request.body,
        metadata: { ...request.body.metadata, [OWNER_METADATA_KEY]: principal.user.id },
      });
      if (thread.metadata[OWNER_METADATA_KEY] !== principal.user.id) throw new ConflictError('Thread already exists.');
      return thread;
    },
  );

  app.get(
    '/threads/:thread_id',
    { schema: { params: threadParamsSchema, response: { 200: threadSchema, ...errorResponses } } },
    async (request) => runtime.getThread(request.params.thread_id),
  );
};
