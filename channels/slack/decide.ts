import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import { type AdmissionRules, type IngressDecision, NOT_ALLOWED } from '../../src/channel/ingress/decision.js';
import type { InboundFile } from '../../src/channel/types.js';
import type { SlackMessageEvent } from './events.js';
import { decodeInboundText } from './inbound-text.js';

export interface DecideContext extends AdmissionRules {
  /** Our bot's member id (`auth.test` `user_id`). */
  botUserId: string;
  /** The workspace (team) the event came from. */
  teamId: string;
  /** Our bot's name, shown for a mention of it that does not lead the message. */
  botName?: string;
  /** Display names of members the text mentions without a label (`SlackNameCache`), by id. */
  userNames?: ReadonlyMap<string, string>;
  /** Names of channels the text references without a label, by id. */
  channelNames?: ReadonlyMap<string, string>;
}

/**
 * What a Slack message event asks of core (pure). Ignores our own and other bots' messages,
 * every subtype but `file_share` (edits, joins, deletions), events without a sender, and ones
 * with neither text nor files. The text is decoded for the model (`inbound-text.ts`: entities,
 * mentions as names, links as `label (url)`; our leading mention removed). `/connect <code>` binds before
 * the allow-list, answered in the message's thread; the rest is forwarded: a top-level message
 * starts a conversation keyed by its ts, a reply in a thread continues the thread's (reference
 * §3.3). Claimed by team, channel and ts, so Slack's retries and the `app_mention` + `message`
 * pair of one mention count once.
 */
export function decideEvent(event: SlackMessageEvent, context: DecideContext): IngressDecision {
  if (event.user === context.botUserId) return { kind: 'ignore', reason: 'self' };
  if (event.bot_id !== undefined) return { kind: 'ignore', reason: 'bot-sender' };
  if (event.subtype !== undefined && event.subtype !== 'file_share') return { kind: 'ignore', reason: 'subtype' };
  const user = event.user;
  if (user === undefined || user === '') return { kind: 'ignore', reason: 'no-sender' };
  const text = decodeInboundText(event.text ?? '', context);
  const files = inboundFilesOf(event);
  if (text.trim() === '' && files.length === 0) return { kind: 'ignore', reason: 'empty' };
  const deliveryKey = `${context.teamId}:${event.channel}:${event.ts}`;
  const isPrivateChat = isDirectMessage(event);
  const code = parseConnectCommand(text);
  if (code !== undefined && context.canBind) {
    return {
      kind: 'bind',
      deliveryKey,
      answerTo: { chatId: event.channel, topicId: event.ts, isPrivateChat, replyTo: { messageId: event.ts } },
      request: {
        identity: { externalAccountId: user, workspaceId: context.teamId },
        code,
        accountName: user,
        metadata: { team_id: context.teamId, channel_id: event.channel },
      },
    };
  }
  if (context.allowedUsers.size > 0 && !context.allowedUsers.has(user)) return { kind: 'ignore', reason: NOT_ALLOWED };
  return {
    kind: 'forward',
    deliveryKey,
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
      isPrivateChat,
      ...(files.length === 0 ? {} : { files }),
    },
  };
}

/** A DM: `channel_type: im`, or (app_mention carries no channel_type) a `D…` channel id. */
export function isDirectMessage(event: Pick<SlackMessageEvent, 'channel' | 'channel_type'>): boolean {
  return event.channel_type === undefined ? event.channel.startsWith('D') : event.channel_type === 'im';
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
