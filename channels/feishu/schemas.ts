import { z } from 'zod';

/**
 * The shapes of what Feishu sends us, as far as we read them, checked before use (issue #13:
 * signed events with `event.message` a string or `sender` null threw TypeErrors after the 200).
 * Loose objects: Feishu adds fields, and real payloads carry `null` for ids it does not have
 * (`sender_id.user_id: null`), so every optional field we read also takes `null`, as absent.
 * https://open.feishu.cn/document/server-docs/im-v1/message/events/receive
 */

/** An optional string that Feishu may also send as `null`; both come out as `undefined`. */
const optionalString = z.preprocess((value) => value ?? undefined, z.string().optional());
/** The same for an object. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => value ?? undefined, schema.optional());

const mentionSchema = z.looseObject({
  key: optionalString,
  id: optional(z.looseObject({ open_id: optionalString })),
  name: optionalString,
});

/**
 * `im.message.receive_v1`'s `event`, flattened as the SDK's EventDispatcher hands it over (the
 * header's `event_id` and `token` beside `sender` and `message`). `sender` and `message` must be
 * objects; the fields `decideMessage` needs may still be absent (it ignores such events).
 */
export const feishuMessageEventSchema = z.looseObject({
  event_id: optionalString,
  token: optionalString,
  sender: z.looseObject({
    sender_id: optional(z.looseObject({ open_id: optionalString })),
    sender_type: optionalString,
  }),
  message: z.looseObject({
    message_id: optionalString,
    root_id: optionalString,
    parent_id: optionalString,
    thread_id: optionalString,
    chat_id: optionalString,
    chat_type: optionalString,
    message_type: optionalString,
    content: optionalString,
    mentions: optional(z.array(mentionSchema)),
  }),
});

/** One received message event, checked. */
export type FeishuMessageEvent = z.output<typeof feishuMessageEventSchema>;

/** An HTTP event callback (schema 2.0) once decrypted and verified: a header that names the event, and the event. */
export const feishuCallbackSchema = z.looseObject({
  header: z.looseObject({ event_id: z.string().min(1), event_type: z.string().min(1), token: optionalString, create_time: optionalString }),
  event: z.looseObject({}),
});
