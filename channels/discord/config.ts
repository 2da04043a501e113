import { z } from 'zod';

const SNOWFLAKE = /^\d{1,20}$/;

const snowflakeSchema = (what: string) =>
  z
    .union([z.string().trim(), z.number().int().nonnegative()], { error: `must be a numeric Discord ${what} id` })
    .transform(String)
    .refine((id) => SNOWFLAKE.test(id), `must be a numeric Discord ${what} id, e.g. 123456789012345678 (names are not accepted)`);

/** `channels.discord` of config.yaml (reference §6.3, §10.2). */
export const discordConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false).describe('Run the Discord channel (gateway websocket in, REST out).'),
    bot_token: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('Bot token from the Developer Portal (Bot → Reset Token); required when enabled. Never logged.'),
    api_url: z
      .url()
      .default('https://discord.com/api')
      .transform((url) => url.replace(/\/+$/, ''))
      .describe('REST root without the version (discord.js adds `/v10`), e.g. a proxy; the gateway URL comes from `GET /gateway/bot`.'),
    mention_only: z
      .boolean()
      .default(false)
      .describe('In servers, answer only messages that mention the bot (DMs and threads the bot opened are always answered).'),
    thread_mode: z
      .boolean()
      .optional()
      .describe('Answer server messages in a new thread started from them; default: the value of `mention_only`.'),
    allowed_guilds: z
      .array(snowflakeSchema('server (guild)'))
      .default([])
      .describe('Server ids the bot serves; empty serves every server. When set, DMs are not served.'),
    allowed_channels: z
      .array(snowflakeSchema('channel'))
      .default([])
      .describe('Channel ids exempt from `mention_only`: every message there is answered (reference §6.3).'),
    allowed_users: z
      .array(snowflakeSchema('user'))
      .default([])
      .describe('User ids allowed to talk to the bot; empty allows everyone.'),
  })
  .superRefine((config, ctx) => {
    if (config.enabled && config.bot_token === undefined) {
      ctx.addIssue({ code: 'custom', path: ['bot_token'], message: 'required when the Discord channel is enabled' });
    }
  })
  .transform((config) => ({ ...config, thread_mode: config.thread_mode ?? config.mention_only }))
  .prefault({});

export type DiscordConfig = z.output<typeof discordConfigSchema>;
