import { z } from 'zod';

/** `channels.wecom` of config.yaml (reference §6.7, §10.2). */
export const wecomConfigSchema = z.strictObject({
  enabled: z.boolean().default(false).describe('Run the WeCom AI bot channel (websocket long connection; no public URL needed).'),
  bot_id: z.string().trim().min(1).optional().describe('The AI bot\'s Bot ID (WeCom admin console → the bot → API mode: long connection). Required when enabled.'),
  bot_secret: z.string().trim().min(1).optional().describe('The AI bot\'s Secret from the same page. Required when enabled. Never logged.'),
  ws_url: z
    .string()
    .trim()
    .regex(/^wss?:\/\//, 'a ws:// or wss:// URL')
    .default('wss://openws.work.weixin.qq.com')
    .describe('The long-connection websocket the SDK opens (a proxy, or a fake in tests).'),
  working_message: z
    .string()
    .trim()
    .min(1)
    .default('Working on it...')
    .describe('The acknowledgement the answer then streams over (reference §6.7).'),
  allowed_users: z
    .union([z.array(z.string().trim().min(1)), z.string().trim().min(1).transform((id) => [id])])
    .default([])
    .describe('WeCom userids allowed to chat; empty = everyone who can reach the bot (the reference has no allow-list for WeCom).'),
});

export type WeComConfig = z.infer<typeof wecomConfigSchema>;
