import { z } from 'zod';
import { type ConversationListRepo, type ConversationSummary, parseConversationCursor } from '../../db/repos/conversation-list-repo.js';
import type { AgentRuntime } from '../../runtime/types.js';
import { errorResponses } from '../error-handler.js';
import { assertNotForeign } from '../thread-ownership.js';
import { toTranscript } from '../transcript.js';
import type { ZodPluginAsync } from '../validation.js';

/** Most conversations one page returns; the default page is smaller. */
const MAX_PAGE = 200;

const conversationSchema = z.object({
  platform: z.string(),
  chat_id: z.string(),
  topic_id: z.string().nullable(),
  title: z.string().nullable(),
  /** The account's name when the thread belongs to one, else the platform's id of the sender. */
  person: z.string().nullable(),
  user_name: z.string().nullable(),
  sender_id: z.string().nullable(),
  thread_id: z.string(),
  last_activity_at: z.string(),
  runs: z.number().int(),
});

const transcriptEntrySchema = z.object({ role: z.enum(['user', 'assistant', 'tool']), text: z.string(), at: z.string().optional() });

function toConversationJson(row: ConversationSummary): z.infer<typeof conversationSchema> {
  return {
    platform: row.platform,
    chat_id: row.chatId,
    topic_id: row.topicId === '' ? null : row.topicId,
    title: row.title,
    person: row.ownerName ?? row.senderId,
    user_name: row.ownerName,
    sender_id: row.senderId,
    thread_id: row.threadId,
    last_activity_at: row.lastActivityAt,
    runs: row.runs,
  };
}

/**
 * `GET /conversations` and `GET /conversations/:thread_id/transcript` (at `/api`): every
 * channel's conversations, newest activity first, for the operator (and on a server without
 * keys); a user sees only those whose thread is theirs. Another user's transcript answers 404,
 * as a thread that does not exist does.
 */
export const conversationRoutes: ZodPluginAsync<{ conversations: ConversationListRepo; runtime: AgentRuntime }> = async (app, { conversations, runtime }) => {
  app.get(
    '/conversations',
    {
      schema: {
        querystring: z.strictObject({
          limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(50),
          before: z
            .string()
            .max(80)
            .refine((text) => parseConversationCursor(text) !== undefined, 'must be a next_before value from an earlier page')
            .optional(),
        }),
        response: { 200: z.object({ conversations: z.array(conversationSchema), next_before: z.string().nullable() }), ...errorResponses },
      },
    },
    async (request) => {
      const { limit, before } = request.query;
      const principal = request.principal;
      const rows = await conversations.list({
        limit,
        before: before === undefined ? undefined : parseConversationCursor(before),
        ownerUserId: principal?.kind === 'user' ? principal.user.id : undefined,
      });
      // A full page may have more behind it; a short one is the end of the list.
      return { conversations: rows.map(toConversationJson), next_before: rows.length === limit ? (rows.at(-1)?.cursor ?? null) : null };
    },
  );

  app.get(
    '/conversations/:thread_id/transcript',
    {
      schema: {
        params: z.object({ thread_id: z.guid('must be a UUID') }),
        // Nothing to choose: a parameter that tries to name someone else is refused, not ignored.
        querystring: z.strictObject({}),
        response: { 200: z.object({ thread_id: z.string(), messages: z.array(transcriptEntrySchema) }), ...errorResponses },
      },
    },
    async (request) => {
      const { thread_id: threadId } = request.params;
      const principal = request.principal;
      if (principal?.kind === 'user') await assertNotForeign(runtime, threadId, principal.user.id);
      const thread = await runtime.getThread(threadId);
      return { thread_id: threadId, messages: toTranscript(thread.values?.messages) };
    },
  );
};
