import { z } from 'zod';

/** `channels.dingtalk` of config.yaml (reference §6.5, §10.2). */
export const dingtalkConfigSchema = z.strictObject({
  enabled: z.boolean().default(false).describe('Run the DingTalk channel (Stream mode; no public URL needed).'),
  client_id: z.string().trim().min(1).optional().describe('The app\'s AppKey (Client ID); also the robot code. Required when enabled.'),
  client_secret: z.string().trim().min(1).optional().describe('The app\'s AppSecret (Client Secret). Required when enabled. Never logged.'),
  api_url: z
    .url()
    .default('https://api.dingtalk.com')
    .transform((url) => url.replace(/\/+$/, ''))
    .describe('Base URL of the Stream gateway (`/v1.0/gateway/connections/open`) and the OpenAPI (token, robot, card, files).'),
  card_template_id: z
    .string()
    .trim()
    .default('')
    .describe('AI card template id with a `content` markdown variable; "" = no streaming: a "⏳ Working on it..." text, then the final markdown.'),
  allowed_users: z
    .union([z.array(z.string().trim().min(1)), z.string().trim().min(1).transform((id) => [id])])
    .default([])
    .describe('Staff ids (or sender ids) allowed to chat; empty = everyone.'),
});

export type DingTalkConfig = z.infer<typeof dingtalkConfigSchema>;
