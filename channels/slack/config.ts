import { z } from 'zod';

const SLACK_USER_ID = /^[UW][A-Z0-9]+$/;

const slackUserIdSchema = z
  .string()
  .trim()
  .regex(SLACK_USER_ID, 'must be a Slack member id, e.g. U0123ABCD (display names are not accepted)');

/** `channels.slack` of config.yaml (reference §6.1, §10.2). */
export const slackConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false).describe('Run the Slack channel.'),
    bot_token: z.string().trim().min(1).optional().describe('Bot User OAuth token (`xoxb-…`); required when enabled. Never logged.'),
    app_token: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('App-level token (`xapp-…`, scope `connections:write`) for Socket Mode. Never logged.'),
    signing_secret: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('Signing secret for HTTP Events (`POST /api/webhooks/slack`). Never logged.'),
    mode: z
      .enum(['socket', 'http'])
      .optional()
      .describe('How events arrive. Default: `socket` when `app_token` is set, else `http` when `signing_secret` is set.'),
    api_url: z
      .url()
      .default('https://slack.com/api/')
      .transform((url) => (url.endsWith('/') ? url : `${url}/`))
      .describe('Web API root; a trailing slash is added. Socket Mode asks it for the websocket URL too.'),
    allowed_users: z
      .union([slackUserIdSchema.transform((id) => [id]), z.array(slackUserIdSchema)])
      .default([])
      .describe('Slack member ids allowed to talk to the bot (one id or a list); empty allows everyone.'),
    native_streaming: z
      .boolean()
      .default(true)
      .describe('Stream replies with chat.startStream/appendStream; falls back to editing a message when Slack refuses.'),
  })
  .superRefine((config, ctx) => {
    if (!config.enabled) return;
    if (config.bot_token === undefined) {
      ctx.addIssue({ code: 'custom', path: ['bot_token'], message: 'required when the Slack channel is enabled' });
    }
    const mode = slackModeOf(config);
    if (mode === 'socket' && config.app_token === undefined) {
      ctx.addIssue({ code: 'custom', path: ['app_token'], message: 'required for Socket Mode (or set signing_secret for HTTP events)' });
    }
    if (mode === 'http' && config.signing_secret === undefined) {
      ctx.addIssue({ code: 'custom', path: ['signing_secret'], message: 'required for HTTP events (or set app_token for Socket Mode)' });
    }
  })
  .prefault({});

export type SlackConfig = z.output<typeof slackConfigSchema>;

/** The event transport: `mode` when set, else Socket Mode when there is an app token, else HTTP. */
export function slackModeOf(config: Pick<SlackConfig, 'mode' | 'app_token' | 'signing_secret'>): 'socket' | 'http' {
  if (config.mode !== undefined) return config.mode;
  if (config.app_token !== undefined) return 'socket';
  return config.signing_secret !== undefined ? 'http' : 'socket';
}
