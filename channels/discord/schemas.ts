import { z } from 'zod';

/**
 * A `MESSAGE_CREATE` dispatch's `d` as far as discord.js and we read it
 * (https://discord.com/developers/docs/resources/message#message-object), checked before
 * discord.js builds its `Message` from it: discord.js 14 trusts the payload, so `author: null` or
 * `attachments: "x"` throws inside its packet handler, where nobody can catch it. Loose objects:
 * Discord adds fields; `null` is allowed where Discord documents it.
 */
const userSchema = z.looseObject({
  id: z.string().min(1),
  username: z.string(),
  bot: z.boolean().optional(),
  global_name: z.string().nullish(),
});

export const discordMessageCreateSchema = z.looseObject({
  id: z.string().min(1),
  channel_id: z.string().min(1),
  guild_id: z.string().optional(),
  author: userSchema,
  content: z.string(),
  attachments: z
    .array(
      z.looseObject({
        id: z.string(),
        filename: z.string(),
        size: z.number(),
        url: z.string(),
        content_type: z.string().optional(),
      }),
    )
    .optional(),
  mentions: z.array(z.looseObject({ id: z.string() })).optional(),
  message_reference: z.looseObject({ message_id: z.string().optional(), channel_id: z.string().optional() }).optional(),
  member: z.looseObject({}).optional(),
  embeds: z.array(z.looseObject({})).optional(),
});
