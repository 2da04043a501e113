import { z } from 'zod';

/**
 * Wire schemas of the LangGraph Platform API subset we serve (snake_case, as the official
 * `@langchain/langgraph-sdk` sends them). Unknown keys are stripped, and `null` counts as absent
 * because some clients send unset fields as null.
 */

/** Any 8-4-4-4-12 hex id, as Postgres `uuid` accepts; the version nibble is not checked. */
const uuid = z.guid('must be a UUID');
const jsonRecord = z.record(z.string(), z.unknown());

function optional<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value): z.output<T> | undefined => value ?? undefined);
}

/** A body that may be missing entirely (no content-type, or `null`): treated as `{}`. */
function optionalBody<T extends z.ZodType>(schema: T) {
  return z.preprocess((value) => value ?? {}, schema);
}

export const threadParamsSchema = z.object({ thread_id: uuid });
export const runParamsSchema = z.object({ thread_id: uuid, run_id: uuid });

export const createThreadBodySchema = optionalBody(
  z.object({
    thread_id: optional(uuid),
    metadata: optional(jsonRecord),
    if_exists: optional(z.enum(['raise', 'do_nothing'])),
  }),
);

const textBlockSchema = z.object({ type: z.literal('text'), text: z.string() });

/** A human message as LangChain accepts it: `{role|type, content}` with text or text blocks. */
const inputMessageSchema = z
  .object({
    role: z.enum(['human', 'user']).optional(),
    type: z.enum(['human', 'user']).optional(),
    content: z.union([z.string(), z.array(textBlockSchema)]),
    additional_kwargs: jsonRecord.optional(),
  })
  .refine((message) => message.role ?? message.type, { message: 'needs role or type (human|user)', path: ['role'] })
  .transform((message) => ({
    role: (message.role ?? message.type ?? 'human') as 'human' | 'user',
    content: typeof message.content === 'string' ? message.content : message.content.map((block) => block.text).join(''),
    ...(message.additional_kwargs ? { additional_kwargs: message.additional_kwargs } : {}),
  }));

/** Every stream mode LangGraph knows; which of them we serve is checked later (422, not 400). */
export const langGraphStreamModes = [
  'values',
  'messages',
  'messages-tuple',
  'updates',
  'events',
  'debug',
  'custom',
  'tasks',
  'checkpoints',
] as const;
const streamModeSchema = z.enum(langGraphStreamModes);

export const runBodySchema = z.object({
  assistant_id: z.string().min(1),
  input: optional(z.object({ messages: z.array(inputMessageSchema) })),
  config: optional(
    z.object({
      recursion_limit: z.number().int().positive().optional(),
      configurable: jsonRecord.optional(),
      tags: z.array(z.string()).optional(),
    }),
  ),
  context: optional(jsonRecord),
  metadata: optional(jsonRecord),
  multitask_strategy: optional(z.enum(['reject', 'interrupt', 'rollback', 'enqueue'])),
  stream_mode: optional(
    z.union([streamModeSchema, z.array(streamModeSchema)]).transform((mode) => (Array.isArray(mode) ? mode : [mode])),
  ),
  /** Accepted for SDK compatibility; streams cannot be re-joined, so it changes nothing. */
  stream_resumable: optional(z.boolean()),
  /** Accepted for SDK compatibility; the lead agent has no subgraphs to stream. */
  stream_subgraphs: optional(z.boolean()),
  /** `cancel` (our default) aborts the run when the client disconnects; `continue` lets it finish. */
  on_disconnect: optional(z.enum(['cancel', 'continue'])),
  /** `create` makes the thread first when it does not exist; `reject` (default) answers 404. */
  if_not_exists: optional(z.enum(['create', 'reject'])),
});
export type RunBody = z.output<typeof runBodySchema>;

export const cancelQuerySchema = z.object({
  wait: z
    .enum(['0', '1', 'true', 'false'])
    .default('0')
    .transform((wait) => wait === '1' || wait === 'true'),
  action: z.enum(['interrupt', 'rollback']).default('interrupt'),
});

const timestamp = z.string();

export const threadSchema = z.object({
  thread_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  metadata: jsonRecord,
  status: z.enum(['idle', 'busy', 'interrupted', 'error']),
  values: jsonRecord.nullable(),
  interrupts: jsonRecord,
});

export const runSchema = z.object({
  run_id: z.string(),
  thread_id: z.string(),
  assistant_id: z.string(),
  status: z.enum(['pending', 'running', 'success', 'error', 'timeout', 'interrupted']),
  created_at: timestamp,
  updated_at: timestamp,
  metadata: jsonRecord,
  multitask_strategy: z.string(),
  kwargs: jsonRecord,
});

/** Final state values, or `{__error__: {error, message}}` for a run that failed (LangGraph's shape). */
export const waitResultSchema = jsonRecord;
