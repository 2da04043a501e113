import { z } from 'zod';

/** One platform's binding switch (reference §10.3); Telegram also needs the bot's username for deep links. */
const providerConnectionSchema = z.strictObject({
  enabled: z.boolean().default(false).describe('Offer this platform in the console.'),
  bot_username: z.string().min(1).optional().describe('Telegram: the bot username for t.me deep links.'),
});

export type ProviderConnectionConfig = z.infer<typeof providerConnectionSchema>;

/**
 * `channel_connections:` section: binding chat identities to server accounts with one-time
 * codes. Off by default: then every chat runs under its sender's platform id, as before.
 */
export const channelConnectionsConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false).describe('Bind chat identities to server users with one-time codes.'),
    require_bound_identity: z.boolean().default(true).describe('With enabled: unbound senders are told to connect and nothing runs.'),
    code_ttl_seconds: z.number().int().positive().default(600).describe('How long a connect code is valid.'),
    max_pending_codes: z.number().int().positive().default(5).describe('Unused codes one user may hold per platform.'),
    max_failed_codes_per_minute: z
      .number()
      .int()
      .positive()
      .default(5)
      .describe('Wrong codes one chat account may send per minute before codes from it are refused unread.'),
    max_failed_codes_per_provider_per_minute: z
      .number()
      .int()
      .positive()
      .default(30)
      .describe(
        'Wrong codes all chat accounts of one platform together may send per minute before codes from every sender on it are refused unread (bounds guessing with many accounts).',
      ),
    telegram: providerConnectionSchema.optional(),
    slack: providerConnectionSchema.optional(),
    discord: providerConnectionSchema.optional(),
    feishu: providerConnectionSchema.optional(),
    dingtalk: providerConnectionSchema.optional(),
    wechat: providerConnectionSchema.optional(),
    wecom: providerConnectionSchema.optional(),
  })
  .prefault({});

export type ChannelConnectionsConfig = z.infer<typeof channelConnectionsConfigSchema>;
