import { z } from 'zod';
import type { Outbox, OutboxEntry } from '../../channel/outbox.js';
import { requireOperator } from '../auth.js';
import { errorResponses } from '../error-handler.js';
import type { ZodPluginAsync } from '../validation.js';

const entrySchema = z.object({
  id: z.number().int(),
  channel: z.string(),
  chat_id: z.string(),
  /** Length of the text still to deliver; the text itself is the conversation's, not the operator's. */
  chars: z.number().int(),
  files: z.number().int(),
  attempts: z.number().int(),
  created_at: z.string(),
  next_attempt_at: z.string(),
  deadline: z.string(),
  dead_at: z.string().nullable(),
  last_error: z.string().nullable(),
});

function toEntryJson(entry: OutboxEntry): z.infer<typeof entrySchema> {
  return {
    id: entry.id,
    channel: entry.channel,
    chat_id: entry.target.chatId,
    chars: entry.text.length,
    files: entry.files.length,
    attempts: entry.attempts,
    created_at: new Date(entry.createdAt).toISOString(),
    next_attempt_at: new Date(entry.nextAttemptAt).toISOString(),
    deadline: new Date(entry.deadline).toISOString(),
    dead_at: entry.deadAt === undefined ? null : new Date(entry.deadAt).toISOString(),
    last_error: entry.lastError ?? null,
  };
}

/**
 * `GET /outbox` and `POST /outbox/retry` (at `/api`), for the operator: replies waiting for
 * another attempt and dead letters, and sending dead letters again (issue #15). The CLI's
 * `outbox` commands call these on the running server.
 */
export const outboxRoutes: ZodPluginAsync<{ outbox: Outbox }> = async (app, { outbox }) => {
  app.get(
    '/outbox',
    {
      schema: {
        querystring: z.strictObject({ state: z.enum(['pending', 'dead']).default('dead'), limit: z.coerce.number().int().min(1).max(1000).default(100) }),
        response: { 200: z.object({ pending: z.number().int(), dead: z.number().int(), entries: z.array(entrySchema) }), ...errorResponses },
      },
    },
    async (request) => {
      // The server's deliveries, not one person's: with accounts, only the operator sees them.
      if (request.principal?.kind === 'user') requireOperator(request);
      const [counts, entries] = await Promise.all([outbox.counts(), outbox.list(request.query.state, request.query.limit)]);
      return { ...counts, entries: entries.map(toEntryJson) };
    },
  );

  app.post(
    '/outbox/retry',
    {
      schema: {
        body: z.strictObject({ id: z.number().int().positive().optional() }),
        response: { 200: z.object({ retried: z.number().int() }), ...errorResponses },
      },
    },
    async (request) => {
      if (request.principal?.kind === 'user') requireOperator(request);
      return { retried: await outbox.retryDead(request.body.id ?? 'all') };
    },
  );
};
