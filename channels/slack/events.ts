import { z } from 'zod';
import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import type { ChatBindRequest, InboundFile, InboundMessage } from '../../src/channel/types.js';

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

/** What to do with one event. */
export type EventDecision =
  | { action: 'ignore'; reason: 'self' | 'bot-sender' | 'subtype' | 'no-sender' | 'empty' | 'not-allowed' }
  | { action: 'bind'; request: ChatBindRequest }
  | { action: 'forward'; message: Omit<InboundMessage, 'replyTo' | 'receivedAt'> };

export interface DecideContext {
  /** Our bot's member id (`auth.test` `user_id`). */
  botUserId: string;
  /** The workspace (team) the event came from. */
  teamId: string;
  /** Empty allows everyone. */
  allowedUsers: ReadonlySet<string>;
  commandNames: ReadonlySet<string>;
  /** `/connect <code>` binds the sender (reference §5.3); false when binding is not configured. */
  canBind: boolean;
}

/**
 * Normalizes a Slack message event (pure). Ignores our own and other bots' messages, every
 * subtype but `file_share` (edits, joins, deletions), events without a sender, and ones with
 * neither text nor files. Our leading mention is stripped. `/connect <code>` binds before the
 * allow-list; the rest is forwarded: a top-level message starts a conversation keyed by its ts,
 * a reply in a thread continues the thread's (reference §3.3).
 */
export function decideEvent(event: SlackMessageEvent, context: DecideContext): EventDecision {
  if (event.user === context.botUserId) return { action: 'ignore', reason: 'self' };
  if (event.bot_id !== undefined) return { action: 'ignore', reason: 'bot-sender' };
  if (event.subtype !== undefined && event.subtype !== 'file_share') return { action: 'ignore', reason: 'subtype' };
  const user = event.user;
  if (user === undefined || user === '') return { action: 'ignore', reason: 'no-sender' };
  const text = stripLeadingMention(event.text ?? '', context.botUserId);
  const files = inboundFilesOf(event);
  if (text.trim() === '' && files.length === 0) return { action: 'ignore', reason: 'empty' };
  const code = parseConnectCommand(text);
  if (code !== undefined && context.canBind) {
    return {
      action: 'bind',
      request: {
        identity: { externalAccountId: user, workspaceId: context.teamId },
        code,
        accountName: user,
        metadata: { team_id: context.teamId, channel_id: event.channel },
      },
    };
  }
  if (context.allowedUsers.size > 0 && !context.allowedUsers.has(user)) return { action: 'ignore', reason: 'not-allowed' };
  return {
    action: 'forward',
    message: {
      channel: 'slack',
      chatId: event.channel,
      topicId: event.thread_ts ?? event.ts,
      userId: user,
      senderIsAllowlisted: context.allowedUsers.size > 0,
      // Reference §1.5: Slack dedupes per team on the message ts.
      workspaceId: context.teamId,
      messageId: event.ts,
      text,
      kind: classifyText(text, context.commandNames),
      isPrivateChat: isDirectMessage(event),
      ...(files.length === 0 ? {} : { files }),
    },
  };
}

/** A DM: `channel_type: im`, or (app_mention carries no channel_type) a `D…` channel id. */
export function isDirectMessage(event: Pick<SlackMessageEvent, 'channel' | 'channel_type'>): boolean {
  return event.channel_type === undefined ? event.channel.startsWith('D') : event.channel_type === 'im';
}

/**
 * Removes our mention (`<@UBOT>`, `<@UBOT|name>`) and the whitespace after it from the start of
 * `text`; mentions of anyone else stay.
 */
export function stripLeadingMention(text: string, botUserId: string): string {
  const mention = new RegExp(`^\\s*<@${escapeRegExp(botUserId)}(?:\\|[^>]*)?>[\\s,:]*`);
  return text.replace(mention, '');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `file_share` files as core's references; `ref` is the private download URL (fetched with the bot token). */
function inboundFilesOf(event: SlackMessageEvent): InboundFile[] {
  return (event.files ?? []).flatMap((file) => {
    const url = file.url_private_download ?? file.url_private;
    if (url === undefined) return [];
    const mimeType = file.mimetype ?? 'application/octet-stream';
    return [
      {
        name: file.name ?? file.title ?? file.id,
        mimeType,
        isImage: mimeType.startsWith('image/'),
        ...(file.size === undefined ? {} : { declaredSize: file.size }),
        ref: url,
      },
    ];
  });
}
