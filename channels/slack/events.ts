import { z } from 'zod';

/**
 * An Events API `event_callback` as far as Bolt and we read it before looking at the event: the
 * envelope of HTTP events and of Socket Mode `events_api` frames
 * (https://docs.slack.dev/apis/events-api#callback-field). Loose: Slack adds fields.
 */
export const slackEventCallbackSchema = z.looseObject({
  type: z.literal('event_callback'),
  team_id: z.string().optional(),
  event_id: z.string().optional(),
  authorizations: z.array(z.looseObject({})).optional(),
  event: z.looseObject({ type: z.string().min(1) }),
});

/** The fields of a `message` / `app_mention` event we read (https://docs.slack.dev/reference/events/message). */
export const slackMessageEventSchema = z.looseObject({
  type: z.enum(['message', 'app_mention']),
  channel: z.string().min(1),
  ts: z.string().min(1),
  user: z.string().optional(),
  text: z.string().optional(),
  thread_ts: z.string().optional(),
  channel_type: z.string().optional(),
  bot_id: z.string().optional(),
  subtype: z.string().optional(),
  team: z.string().optional(),
  files: z
    .array(
      z.looseObject({
        id: z.string(),
        name: z.string().optional(),
        title: z.string().optional(),
        mimetype: z.string().optional(),
        size: z.number().optional(),
        url_private_download: z.string().optional(),
        url_private: z.string().optional(),
      }),
    )
    .optional(),
});

export type SlackMessageEvent = z.output<typeof slackMessageEventSchema>;
