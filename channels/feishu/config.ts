import { z } from 'zod';

/** `channels.feishu` of config.yaml. */
export const feishuConfigSchema = z.object({
  enabled: z.boolean().default(false).describe('Run the Feishu/Lark channel.'),
  app_id: z.string().min(1).optional().describe('App ID of the custom app (`cli_…`), from the developer console.'),
  app_secret: z.string().min(1).optional().describe('App Secret of the custom app. Secret.'),
  domain: z
    .string()
    .url()
    .default('https://open.feishu.cn')
    .transform((url) => url.replace(/\/+$/, ''))
    .describe('Open platform base URL: https://open.feishu.cn (Feishu) or https://open.larksuite.com (Lark).'),
  allowed_users: z.array(z.string()).default([]).describe('open_ids (`ou_…`) served; empty = anyone who can message the bot.'),
  mode: z.enum(['ws', 'http']).default('ws').describe('`ws`: long connection, no public URL. `http`: event callbacks at POST /api/webhooks/feishu.'),
  encrypt_key: z.string().min(1).optional().describe('Event "Encrypt Key"; required in `http` mode (signatures are checked with it). Secret.'),
  verification_token: z.string().min(1).optional().describe('Event "Verification Token"; compared by us in `http` mode when set. Secret.'),
  cardkit: z
    .boolean()
    .default(true)
    .describe('Stream into a CardKit card (needs cardkit:card:write); false = PATCH an interactive card (slower: 4 updates/s).'),
  running_text: z.string().min(1).default('Thinking…').describe('Text of the card shown while the agent works.'),
});

export type FeishuConfig = z.infer<typeof feishuConfigSchema>;
