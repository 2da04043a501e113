import { z } from 'zod';
import type { ListedRunStatus, RunListRepo, RunSummary } from '../../db/repos/run-list-repo.js';
import { requireOperator } from '../auth.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

/** Which stored statuses each `status` filter reads. */
const STATUS_FILTERS: Record<'running' | 'failed' | 'all', readonly ListedRunStatus[]> = {
  running: ['pending', 'running'],
  failed: ['error', 'timeout'],
  all: ['pending', 'running', 'success', 'error', 'timeout', 'interrupted'],
};

const runSchema = z.object({
  run_id: z.string(),
  thread_id: z.string(),
  status: z.enum(STATUS_FILTERS.all as [ListedRunStatus, ...ListedRunStatus[]]),
  platform: z.string().nullable(),
  chat_id: z.string().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  error_kind: z.string().nullable(),
});

/**
 * The kind of a stored failure: its description up to the first colon ("model call failed",
 * "lease expired"), so the list names what went wrong without any detail the description holds.
 */
export function errorKindOf(error: string | null): string | null {
  if (error === null || error === '') return null;
  return (error.split(':')[0] as string).trim().slice(0, 80);
}

function toRunJson(run: RunSummary): z.infer<typeof runSchema> {
  return {
    run_id: run.id,
    thread_id: run.threadId,
    status: run.status,
    platform: run.platform,
    chat_id: run.chatId,
    created_at: run.createdAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    ended_at: run.finishedAt?.toISOString() ?? null,
    error_kind: errorKindOf(run.error),
  };
}

/**
 * `GET /runs` (at `/api`), for the operator: the agent's runs across every thread, newest first,
 * with where they ran and how they ended. Cancelling is the LangGraph route's
 * (`POST /threads/:thread_id/runs/:run_id/cancel`).
 */
export const runListRoutes: ZodPluginAsync<{ runs: RunListRepo }> = async (app, { runs }) => {
  app.get(
    '/runs',
    {
      schema: {
        querystring: z.strictObject({
          status: z.enum(['running', 'failed', 'all']).default('all'),
          limit: z.coerce.number().int().min(1).max(500).default(100),
        }),
        response: { 200: z.object({ runs: z.array(runSchema) }), ...errorResponses },
      },
    },
    async (request) => {
      // Every thread's runs, not one person's: only the operator (or a server without keys) sees them.
      if (request.principal?.kind === 'user') requireOperator(request);
      const { status, limit } = request.query;
      return { runs: (await runs.list({ statuses: STATUS_FILTERS[status], limit })).map(toRunJson) };
    },
  );
};
