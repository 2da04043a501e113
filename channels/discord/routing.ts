import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import type { ChatBindRequest, InboundFile, InboundMessage } from '../../src/channel/types.js';
import { DM_WORKSPACE_ID, mentionsUser, stripMentions, threadNameFor } from './ids.js';

/** A Discord message reduced to what routing needs, as plain data (see `ingress.ts` `factsOf`). */
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
  /** The message this one replies to, and that message's own reply target when it was ours. */
  reference?: { messageId: string; rootId?: string };
  files: InboundFile[];
}

export interface RoutingContext {
  botUserId: string;
  mentionOnly: boolean;
  threadMode: boolean;
  /** Each empty set means "no restriction" (see `config.ts`). */
  allowedGuilds: ReadonlySet<string>;
  allowedChannels: ReadonlySet<string>;
  allowedUsers: ReadonlySet<string>;
  commandNames: ReadonlySet<string>;
  canBind: boolean;
  /** The message sits in a thread this bot opened (looked up before deciding). */
  isOwnThread: boolean;
}

/** Where the reply goes. */
export type Route =
  | { kind: 'dm' }
  /** In the channel the message came from (a server channel, or a thread we did not open). */
  | { kind: 'channel'; topicId: string }
  /** In the thread the message was posted in, one we opened. */
  | { kind: 'thread'; threadId: string }
  /** In a new thread started from the message; in the channel when that fails. */
  | { kind: 'new-thread'; name: string };

export type IgnoreReason = 'own' | 'bot' | 'guild-not-allowed' | 'not-mentioned' | 'empty' | 'not-allowed';

export type RoutingDecision =
  | { action: 'ignore'; reason: IgnoreReason }
  | { action: 'bind'; request: ChatBindRequest }
  | { action: 'forward'; route: Route; message: Omit<InboundMessage, 'replyTo' | 'receivedAt' | 'chatId' | 'topicId'> };

/**
 * What to do with one message (pure), in the reference's order (§6.0, §6.3): ignore ourselves and
 * other bots; apply `allowed_guilds` (DMs are dropped when it is set); apply `mention_only`
 * (DMs, threads we opened and `allowed_channels` are exempt); strip mentions of the bot; drop
 * what is left empty with no files; consume `/connect <code>`; apply `allowed_users`; then route.
 */
export function decideMessage(facts: MessageFacts, context: RoutingContext): RoutingDecision {
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
  const text = stripMentions(facts.content, context.botUserId);
  if (text.length === 0 && facts.files.length === 0) return ignore('empty');
  const code = parseConnectCommand(text);
  if (code !== undefined && context.canBind) return { action: 'bind', request: bindRequestOf(facts, code) };
  const isAllowlisted = context.allowedUsers.has(author.id);
  if (context.allowedUsers.size > 0 && !isAllowlisted) return ignore('not-allowed');
  return {
    action: 'forward',
    route: routeOf(facts, context, isMentioned),
    message: {
      channel: 'discord',
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

function routeOf(facts: MessageFacts, context: RoutingContext, isMentioned: boolean): Route {
  if (facts.isDm) return { kind: 'dm' };
  if (facts.thread && context.isOwnThread) return { kind: 'thread', threadId: facts.thread.id };
  // Reference §6.3: with mention_only a mention opens a thread; thread_mode opens one for every
  // message (thread_mode defaults to mention_only in config.ts). Threads cannot hold threads.
  const wantsThread = context.threadMode && (isMentioned || !context.mentionOnly);
  if (wantsThread && facts.thread === undefined && facts.canStartThread) {
    return { kind: 'new-thread', name: threadNameFor(facts.author.displayName, facts.messageId) };
  }
  // A reply continues the conversation of the message it answers; a reply to our answer
  // continues the conversation of the message we answered.
  return { kind: 'channel', topicId: facts.reference?.rootId ?? facts.reference?.messageId ?? facts.messageId };
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

function ignore(reason: IgnoreReason): RoutingDecision {
  return { action: 'ignore', reason };
}
