import type { FastifyRequest } from 'fastify';
import { NotFoundError } from '../errors.js';
import type { AgentRuntime } from '../runtime/types.js';

/** Thread metadata key naming the account a thread belongs to (set when a user or bound chat creates it). */
export const OWNER_METADATA_KEY = 'owner_user_id';

/**
 * A `preHandler` for routes with a `:thread_id`: a signed-in user reaches only threads their
 * account owns; any other thread answers 404, exactly like one that does not exist. The operator
 * and single-user servers (no principal) reach every thread. A thread that does not exist yet
 * passes, so `if_not_exists: 'create'` can create it as the caller's.
 */
export function threadOwnershipCheck(runtime: AgentRuntime) {
  return async (request: FastifyRequest): Promise<void> => {
    const principal = request.principal;
    const threadId = (request.params as { thread_id?: unknown } | undefined)?.thread_id;
    if (principal?.kind !== 'user' || typeof threadId !== 'string') return;
    await assertNotForeign(runtime, threadId, principal.user.id);
  };
}

/** 404 when `threadId` exists and belongs to someone other than `userId`; a missing thread passes. */
export async function assertNotForeign(runtime: AgentRuntime, threadId: string, userId: string): Promise<void> {
  // Metadata only: a long thread's checkpoint is not read just to learn whose it is.
  const owner = await runtime.getThread(threadId, { withValues: false }).then(
    (thread) => thread.metadata[OWNER_METADATA_KEY],
    (error: unknown) => {
      if (error instanceof NotFoundError) return userId;
      throw error;
    },
  );
  if (owner !== userId) throw new NotFoundError('Thread');
}
