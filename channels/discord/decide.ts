import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import { type AdmissionRules, type IngressDecision, NOT_ALLOWED, type PendingInbound } from '../../src/channel/ingress/decision.js';
import type { ChatBindRequest, InboundFile } from '../../src/channel/types.js';
import { DM_WORKSPACE_ID, mentionsUser, threadNameFor } from './ids.js';
import { type MentionNames, readableText } from './inbound-text.js';

/** A Discord message reduced to what deciding needs, as plain data (see `ingress.ts` `factsOf`). */
export interface MessageFacts {
  messageId: string;
  /** The channel it was posted in: a DM, a server text channel or a thread. */
  channelId: string;
  /** Absent in DMs. */
  guildId?: string;
  guildName?: string;
  isDm: boolean;
  /** Set when posted inside a thread. */
  thread?: { id: string; parentId: string };
  /** A server channel threads can be started in (text and announcement channels). */
  canStartThread: boolean;
  author: { id: string; isBot: boolean; displayName: string; username: string };
  content: string;
  /** Names of the users, roles and channels `content` mentions, as the event and discord.js's cache have them. */
  mentionNames: MentionNames;
  /** The message this one replies to, and that message's own reply target when it was ours. */
  reference?: { messageId: string; rootId?: string };
  files: InboundFile[];
}

export interface DecideContext extends AdmissionRules {
  botUserId: string;
  mentionOnly: boolean;
  threadMode: boolean;
  /** Each empty set means "no restriction" (see `config.ts`), as for `allowedUsers`. */
  allowedGuilds: ReadonlySet<string>;
  allowedChannels: ReadonlySet<string>;
  /** The message sits in a thread this bot opened (looked up before deciding). */
  isOwnThread: boolean;
}

/**
 * `platformData` of a server message that gets a thread of its own: the thread's name. Starting
 * the thread posts to Discord, so it waits for the intake's reservation (`ingress.ts` `place`);
 * until then, and when it cannot be made, the message is keyed in its channel.
 */
export const THREAD_NAME = 'threadName';

/**
 * What to do with one message (pure), in the reference's order (§6.0, §6.3): ignore ourselves and
 * other bots; apply `allowed_guilds` (DMs are dropped when it is set); apply `mention_only`
 * (DMs, threads we opened and `allowed_channels` are exempt); turn the content into the text the
 * model reads (`inbound-text.ts`: mentions of the bot removed, other mentions named); drop
 * what is left empty with no files; consume `/connect <code>`; apply `allowed_users`; then pick
 * the conversation. Claimed by guild, channel and message id, so a message the gateway replays
 * on RESUME is admitted once.
 */
export function decideMessage(facts: MessageFacts, context: DecideContext): IngressDecision {
  const { author } = facts;
  if (author.id === context.botUserId) return ignore('own');
  if (author.isBot) return ignore('bot');
  if (context.allowedGuilds.size > 0 && (facts.guildId === undefined || !context.allowedGuilds.has(facts.guildId))) {
    return ignore('guild-not-allowed');
  }
  const isMentioned = mentionsUser(facts.content, context.botUserId);
  const gatedChannelId = facts.thread?.parentId ?? facts.channelId;
  const isExempt = facts.isDm || context.isOwnThread || context.allowedChannels.has(gatedChannelId) || context.allowedChannels.has(facts.channelId);
  if (context.mentionOnly && !isMentioned && !isExempt) return ignore('not-mentioned');
  const text = readableText(facts.content, context.botUserId, facts.mentionNames);
  if (text.trim().length === 0 && facts.files.length === 0) return ignore('empty');
  const deliveryKey = `${facts.guildId ?? 'dm'}:${facts.channelId}:${facts.messageId}`;
  const code = parseConnectCommand(text);
  if (code !== undefined && context.canBind) {
    return {
      kind: 'bind',
      deliveryKey,
      request: bindRequestOf(facts, code),
      answerTo: { chatId: facts.channelId, isPrivateChat: facts.isDm, replyTo: { messageId: facts.messageId } },
    };
  }
  const isAllowlisted = context.allowedUsers.has(author.id);
  if (context.allowedUsers.size > 0 && !isAllowlisted) return ignore(NOT_ALLOWED);
  return {
    kind: 'forward',
    deliveryKey,
    message: {
      channel: 'discord',
      ...conversationOf(facts, context, isMentioned),
      userId: author.id,
      senderIsAllowlisted: isAllowlisted,
      workspaceId: facts.guildId ?? DM_WORKSPACE_ID,
      messageId: facts.messageId,
      text,
      kind: classifyText(text, context.commandNames),
      isPrivateChat: facts.isDm,
      ...(facts.files.length === 0 ? {} : { files: facts.files }),
    },
  };
}

/** The conversation and the channel the reply goes to (see `ids.ts`). */
function conversationOf(facts: MessageFacts, context: DecideContext, isMentioned: boolean): Pick<PendingInbound, 'chatId' | 'topicId' | 'platformData'> {
  if (facts.isDm) return { chatId: facts.channelId };
  if (facts.thread && context.isOwnThread) return { chatId: facts.thread.id, topicId: facts.thread.id };
  // Reference §6.3: with mention_only a mention opens a thread; thread_mode opens one for every
  // message (thread_mode defaults to mention_only in config.ts). Threads cannot hold threads.
  const wantsThread = context.threadMode && (isMentioned || !context.mentionOnly);
  if (wantsThread && facts.thread === undefined && facts.canStartThread) {
    return { chatId: facts.channelId, topicId: facts.messageId, platformData: { [THREAD_NAME]: threadNameFor(facts.author.displayName, facts.messageId) } };
  }
  // A reply continues the conversation of the message it answers; a reply to our answer
  // continues the conversation of the message we answered.
  return { chatId: facts.channelId, topicId: facts.reference?.rootId ?? facts.reference?.messageId ?? facts.messageId };
}

/** Reference §6.0: Discord binds per guild; in DMs there is no workspace. */
function bindRequestOf(facts: MessageFacts, code: string): ChatBindRequest {
  return {
    identity: { externalAccountId: facts.author.id, ...(facts.guildId === undefined ? {} : { workspaceId: facts.guildId }) },
    code,
    accountName: facts.author.displayName || facts.author.username,
    ...(facts.guildName === undefined ? {} : { workspaceName: facts.guildName }),
    metadata: { channel_id: facts.channelId, guild_id: facts.guildId ?? null, discord_username: facts.author.username },
  };
}

function ignore(reason: 'own' | 'bot' | 'guild-not-allowed' | 'not-mentioned' | 'empty' | typeof NOT_ALLOWED): IngressDecision {
  return { kind: 'ignore', reason };
}
