import { z } from 'zod';

/** `{url, aeskey}` of an image or file: the download link (valid 5 minutes) and its key. */
const mediaSchema = z.object({ url: z.string().min(1), aeskey: z.string().optional() });
const textSchema = z.object({ content: z.string().nullish() });

/**
 * The body of an `aibot_msg_callback` frame (path/101463 "接收消息回调"; the SDK's
 * `types/message.d.ts`), the fields `parse.ts` reads. Unknown fields pass; a body that fails this
 * is dropped with one warning naming the paths.
 */
export const callbackBodySchema = z.looseObject({
  msgid: z.string().min(1),
  aibotid: z.string().min(1),
  chatid: z.string().min(1).optional(),
  chattype: z.enum(['single', 'group']),
  from: z.looseObject({ userid: z.string().min(1) }),
  msgtype: z.string(),
  text: textSchema.nullish(),
  image: mediaSchema.nullish(),
  file: mediaSchema.nullish(),
  mixed: z
    .object({
      msg_item: z.array(z.looseObject({ msgtype: z.string(), text: textSchema.nullish(), image: mediaSchema.nullish() })).nullish(),
    })
    .nullish(),
  // Reference tests: a null quote, quote text or content never breaks a message.
  quote: z.looseObject({ msgtype: z.string().nullish(), text: textSchema.nullish() }).nullish(),
});

export type CallbackBody = z.infer<typeof callbackBodySchema>;
