import { ConflictError, NotFoundError } from '../../../errors.js';
import type { AgentRuntime } from '../../../runtime/types.js';
import { errorResponses } from '../../error-handler.js';
import { assertNotForeign, OWNER_METADATA_KEY } from '../../thread-ownership.js';
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
      // A user's threads carry their account; someone else's thread id answers as on every other
      // route (404), so creating cannot tell that it exists.
      const { thread_id: threadId } = request.body;
      const thread = await runtime
        .createThread({ ...request.body, metadata: { ...request.body.metadata, [OWNER_METADATA_KEY]: principal.user.id } })
        .catch(async (error: unknown) => {
          // `if_exists: raise` on a taken id: only the caller's own thread may say so.
          if (error instanceof ConflictError && threadId !== undefined) await assertNotForeign(runtime, threadId, principal.user.id);
          throw error;
        });
      if (thread.metadata[OWNER_METADATA_KEY] !== principal.user.id) throw new NotFoundError('Thread');
      return thread;
    },
  );

  app.get(
    '/threads/:thread_id',
    { schema: { params: threadParamsSchema, response: { 200: threadSchema, ...errorResponses } } },
    async (request) => runtime.getThread(request.params.thread_id),
  );
};
