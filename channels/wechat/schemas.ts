import { z } from 'zod';

/**
 * The iLink JSON this adapter reads, checked at the edge (wire facts in README.md). Unknown
 * fields pass; missing optional ones are absent. Ids arrive as strings (see `api.ts`
 * `parseIlinkJson`: uint64 ids are quoted before parsing).
 */

/** Item types of `item_list` (`MessageItemType` in the package's `src/api/types.ts`). */
export const ITEM_TYPE = { text: 1, image: 2, voice: 3, file: 4, video: 5 } as const;
/** `message_type`: 1 a person, 2 a bot (our own sends echo back with 2). */
export const MESSAGE_TYPE = { user: 1, bot: 2 } as const;

const idSchema = z.union([z.string(), z.number()]).transform(String);

export const cdnMediaSchema = z.looseObject({
  encrypt_query_param: z.string().optional(),
  aes_key: z.string().optional(),
  encrypt_type: z.number().optional(),
  full_url: z.string().optional(),
});

export const messageItemSchema = z.looseObject({
  type: z.number().int().optional(),
  msg_id: idSchema.optional(),
  text_item: z.looseObject({ text: z.string().optional() }).optional(),
  image_item: z
    .looseObject({ media: cdnMediaSchema.optional(), aeskey: z.string().optional(), mid_size: z.number().optional(), hd_size: z.number().optional() })
    .optional(),
  voice_item: z.looseObject({ media: cdnMediaSchema.optional(), text: z.string().optional() }).optional(),
  file_item: z.looseObject({ media: cdnMediaSchema.optional(), file_name: z.string().optional(), len: idSchema.optional() }).optional(),
});

export const wechatMessageSchema = z.looseObject({
  seq: z.number().optional(),
  message_id: idSchema.optional(),
  from_user_id: z.string().min(1),
  to_user_id: z.string().optional(),
  client_id: z.string().optional(),
  create_time_ms: z.number().optional(),
  group_id: z.string().optional(),
  message_type: z.number().int().optional(),
  item_list: z.array(messageItemSchema).default([]),
  context_token: z.string().optional(),
});

export type WeChatMessage = z.output<typeof wechatMessageSchema>;
export type WeChatMessageItem = z.output<typeof messageItemSchema>;
export type CdnMedia = z.output<typeof cdnMediaSchema>;

export const getUpdatesResponseSchema = z.looseObject({
  ret: z.number().optional(),
  errcode: z.number().optional(),
  errmsg: z.string().optional(),
  // Each message is checked on its own, so one malformed message never drops its batch.
  msgs: z.array(z.unknown()).default([]),
  get_updates_buf: z.string().optional(),
  longpolling_timeout_ms: z.number().optional(),
});

export const sendMessageResponseSchema = z.looseObject({
  ret: z.number().optional(),
  errcode: z.number().optional(),
  errmsg: z.string().optional(),
  message_id: idSchema.optional(),
});

export const getUploadUrlResponseSchema = z.looseObject({
  ret: z.number().optional(),
  errcode: z.number().optional(),
  upload_param: z.string().optional(),
  upload_full_url: z.string().optional(),
});

export const qrCodeResponseSchema = z.looseObject({ qrcode: z.string().min(1), qrcode_img_content: z.string().optional() });

export const qrStatusResponseSchema = z.looseObject({
  status: z.string(),
  bot_token: z.string().optional(),
  ilink_bot_id: z.string().optional(),
  baseurl: z.string().optional(),
  redirect_host: z.string().optional(),
});
