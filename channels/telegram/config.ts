import { z } from 'zod';

const NUMERIC_ID = /^-?\d+$/;

const telegramUserIdSchema = z.union(
  [
    z.number().int('must be a whole number (a Telegram user id)'),
    z.string().trim().regex(NUMERIC_ID, 'must be a numeric Telegram user id, e.g. 123456789 (usernames are not accepted)'),
  ],
  { error: 'must be a numeric Telegram user id, e.g. 123456789' },
);

/** `channels.telegram` of config.yaml (reference §6.2, §10.2). */
export const telegramConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false).describe('Run the Telegram channel (long polling).'),
    bot_token: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('Bot token from @BotFather; required when enabled. Never logged.'),
    api_root: z
      .url()
      .default('https://api.telegram.org')
      .transform((url) => url.replace(/\/+$/, ''))
      .describe('Bot API server root, e.g. a self-hosted telegram-bot-api; a trailing slash is removed.'),
    allowed_users: z
      .array(telegramUserIdSchema)
      .default([])
      .transform((ids) => ids.map(Number))
      .describe('Numeric Telegram user ids allowed to talk to the bot; empty allows everyone.'),
    polling_timeout_seconds: z
      .number()
      .int()
      .positive()
      .default(30)
      .describe('How long one getUpdates long poll is held open by Telegram, in seconds.'),
  })
  .superRefine((config, ctx) => {
    if (config.enabled && config.bot_token === undefined) {
      ctx.addIssue({ code: 'custom', path: ['bot_token'], message: 'required when the Telegram channel is enabled' });
    }
  })
  .prefault({});

export type TelegramConfig = z.output<typeof telegramConfigSchema>;
