import { z } from 'zod';
import { WEB_LIMITS } from './limits.js';

export const conversationSchema = z.object({ id: z.string(), title: z.string(), created_at: z.string(), updated_at: z.string() });

export const messageSchema = z.object({
  id: z.number().int(),
  author: z.enum(['person', 'agent']),
  text: z.string(),
  files: z.array(z.object({ id: z.string(), name: z.string(), mime_type: z.string(), size: z.number().int() })),
  is_final: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const conversationParams = z.strictObject({ id: z.uuid('must be a conversation id') });

export const fileParams = z.strictObject({ id: z.uuid('must be a conversation id'), file_id: z.uuid('must be a file id') });

export const newConversationBody = z.strictObject({ title: z.string().max(200).default('') }).prefault({});

export const messageBody = z
  .strictObject({
    text: z.string().max(WEB_LIMITS.maxInboundChars, `at most ${WEB_LIMITS.maxInboundChars} characters`).default(''),
    client_message_id: z.uuid('must be a UUID the page made for this message'),
    file_ids: z.array(z.uuid('must be a file id')).max(WEB_LIMITS.maxFilesPerMessage).default([]),
  })
  .refine((body) => body.text.trim().length > 0 || body.file_ids.length > 0, { message: 'a message needs text or a file', path: ['text'] });

export const afterQuery = z.strictObject({ after: z.coerce.number().int().min(0).default(0) });

export const uploadQuery = z.strictObject({
  name: z.string().trim().min(1).max(255),
  type: z
    .string()
    .regex(/^[\w.+-]+\/[\w.+-]+$/, 'must be a MIME type')
    .default('application/octet-stream'),
});

/** How admission of a posted message ended, as the page reads it. */
export const submitResponse = z.object({ outcome: z.enum(['accepted', 'duplicate', 'refused']) });
