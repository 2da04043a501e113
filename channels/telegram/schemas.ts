import { z } from 'zod';

/**
 * A `message` update's message as far as we read it (https://core.telegram.org/bots/api#message),
 * checked before `decideMessage` does: grammY passes the Bot API's JSON on unchecked, so a
 * message with `chat: null` or `from` a string would throw a TypeError in our handler. Loose
 * objects: Telegram adds fields with every Bot API version.
 */
const photoSizeSchema = z.looseObject({ file_id: z.string().min(1), file_unique_id: z.string().optional(), file_size: z.number().optional() });

export const telegramMessageSchema = z.looseObject({
  message_id: z.number().int(),
  chat: z.looseObject({ id: z.number().int(), type: z.string().min(1), title: z.string().optional() }),
  from: z
    .looseObject({
      id: z.number().int(),
      is_bot: z.boolean(),
      first_name: z.string(),
      last_name: z.string().optional(),
      username: z.string().optional(),
    })
    .optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  photo: z.array(photoSizeSchema).optional(),
  document: z
    .looseObject({ file_id: z.string().min(1), file_name: z.string().optional(), mime_type: z.string().optional(), file_size: z.number().optional() })
    .optional(),
  reply_to_message: z.looseObject({ message_id: z.number().int() }).optional(),
  message_thread_id: z.number().int().optional(),
});
