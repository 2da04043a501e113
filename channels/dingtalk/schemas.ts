import { z } from 'zod';
import type { RobotMessage } from './parse.js';

/**
 * The robot message callback's `data` (sdk-recipes §5), checked before {@link parseRobotMessage}
 * reads it: every field we read has the type we read it as, or is absent (`null` counts as
 * absent). Loose: DingTalk sends more (`atUsers`, `isAdmin`, `createAt`, ...).
 * https://open.dingtalk.com/document/orgapp/receive-message
 */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => value ?? undefined, schema.optional());
const optionalString = optional(z.string());

const richTextPartSchema = z.looseObject({
  text: optionalString,
  type: optionalString,
  downloadCode: optionalString,
  pictureDownloadCode: optionalString,
});

export const robotMessageSchema = z.looseObject({
  msgId: optionalString,
  msgtype: optionalString,
  conversationId: optionalString,
  conversationType: optional(z.union([z.string(), z.number()])),
  senderId: optionalString,
  senderStaffId: optionalString,
  senderNick: optionalString,
  chatbotUserId: optionalString,
  robotCode: optionalString,
  sessionWebhook: optionalString,
  sessionWebhookExpiredTime: optional(z.number()),
  text: optional(
    z.looseObject({
      content: optionalString,
      isReplyMsg: optional(z.boolean()),
      repliedMsg: optional(z.looseObject({ msgId: optionalString })),
    }),
  ),
  content: optional(
    z.looseObject({
      richText: optional(z.array(richTextPartSchema)),
      downloadCode: optionalString,
      pictureDownloadCode: optionalString,
      fileName: optionalString,
    }),
  ),
}) satisfies z.ZodType<RobotMessage>;
