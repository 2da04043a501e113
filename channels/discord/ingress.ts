import { ChannelType, type Client, Events, type Message } from 'discord.js';
import { type AdmissionRules, admissionRules, type PendingInbound } from '../../src/channel/ingress/decision.js';
import { type IngressAdapter, type IngressOutcome, IngressPipeline } from '../../src/channel/ingress/pipeline.js';
import { IngressRunner } from '../../src/channel/ingress/runner.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { ChannelDeps, ChannelStatus } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import { settledWithin } from '../../src/time.js';
import type { DiscordApi } from './api.js';
import { type DecideContext, decideMessage, type MessageFacts, THREAD_NAME } from './decide.js';
import { replyReferenceFor } from './egress.js';
import { gatewayCloseError, toChannelError } from './errors.js';
import { discordInboundFiles } from './files.js';
import type { MentionNames } from './inbound-text.js';
import { escapeDiscordText } from './render.js';
import { discordMessageCreateSchema } from './schemas.js';
import type { ThreadMap } from './threads.js';
import type { TypingIndicators } from './typing.js';

/** The reaction that says "seen, working on it" (reference §6.3 uses ✅; 👀 reads as "looking"). */
export const ACK_REACTION = '👀';

/**
 * `platformData` of a message answered in the thread it started: the channel its starter message
 * sits in, where the acknowledgement reaction goes (the thread shares the message's id).
 */
const STARTER_CHANNEL_ID = 'starterChannelId';

export interface DiscordIngressOptions {
  /** A new gateway client for each start: discord.js does not log a destroyed client in again. */
  createClient: () => Client;
  token: string;
  api: DiscordApi;
  threads: ThreadMap;
  typing: TypingIndicators;
  deps: ChannelDeps;
  /** `allowed_users`: ids allowed to talk to the bot; empty = everyone. */
  allowedUsers: readonly string[];
  routing: Omit<DecideContext, 'botUserId' | 'isOwnThread' | keyof AdmissionRules>;
  /** How long `start()` waits for READY and the servers; default 30000 ms. */
  startTimeoutMs?: number;
  /** How long `stop()` lets admissions and acknowledgements in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
}

/**
 * The gateway half: discord.js holds the websocket (heartbeats, RESUME after a drop, a new
 * IDENTIFY after an invalid session) and hands each MESSAGE_CREATE here; it is decided
 * (`decide.ts`) and admitted through core's pipeline, each channel's messages in order. The
 * gateway never sends a message again, so one the intake refused is answered with the busy notice.
 */
export class DiscordIngress {
  private state: ChannelStatus = { running: false, reason: 'not started' };
  /** The gateway client while started (or starting). */
  private client: Client | undefined;
  private readonly pipeline: IngressPipeline;
  private readonly runner: IngressRunner;
  /** Acknowledgement reactions under way: not awaited by the admission (reactions have a tight bucket). */
  private readonly reactions = new Set<Promise<void>>();
  private readonly rules: AdmissionRules;
  /** Set while `start()` waits for READY: a gateway that closes for good fails the start. */
  private gatewayClosed: ((error: Error) => void) | undefined;

  constructor(private readonly options: DiscordIngressOptions) {
    this.rules = admissionRules(options.deps, options.allowedUsers);
    this.pipeline = new IngressPipeline(this.adapter(), options.deps, options.deps.logger);
    this.runner = new IngressRunner(options.deps.logger);
  }

  /** Listens to a new client's gateway events. */
  private listen(client: Client): void {
    const { deps } = this.options;
    this.guardPackets(client);
    client.on(Events.MessageCreate, (message) => this.receive(message));
    client.on(Events.ShardResume, (_id, replayed) => deps.logger.info({ replayed }, 'Discord gateway resumed'));
    client.on(Events.ShardReconnecting, () => deps.logger.info('Discord gateway reconnecting'));
    client.on(Events.Invalidated, () => {
      this.state = { running: false, reason: 'Discord invalidated the session' };
    });
    // Close codes discord.js will not reconnect after (bad token, refused intents).
    client.on(Events.ShardDisconnect, (event) => {
      const error = gatewayCloseError(event.code);
      this.state = { running: false, reason: error.message };
      this.gatewayClosed?.(error);
      deps.logger.error({ err: describeError(error) }, 'Discord gateway closed for good');
    });
    client.on(Events.Error, (error) => deps.logger.error({ err: describeError(toChannelError(error)) }, 'Discord client error'));
  }

  /**
   * discord.js 14 builds its `Message` from a MESSAGE_CREATE payload without checking it, inside
   * its packet handler (`WebSocketManager.handlePacket`): a malformed one throws where nobody can
   * catch it. Its handler is put behind our schema; a malformed message is dropped with one warning.
   */
  private guardPackets(client: Client): void {
    const manager = client.ws as unknown as { handlePacket(packet: unknown, shard: unknown): boolean };
    const handlePacket = manager.handlePacket.bind(manager);
    manager.handlePacket = (packet, shard) => {
      const dispatch = packet as { t?: unknown; d?: unknown } | undefined;
      if (dispatch?.t === 'MESSAGE_CREATE') {
        const checked = discordMessageCreateSchema.safeParse(dispatch.d);
        if (!checked.success) {
          logMalformedEvent(this.options.deps.logger, 'discord', 'MESSAGE_CREATE', checked.error);
          // Still drain the packets discord.js queued before READY.
          return handlePacket(undefined, shard);
        }
      }
      return handlePacket(packet, shard);
    };
  }

  status(): ChannelStatus {
    return { ...this.state };
  }

  /**
   * Logs in (`GET /gateway/bot`, then IDENTIFY) and waits for READY and the servers.
   *
   * @throws ChannelError `CHANNEL_UNAUTHORIZED` when Discord rejects the token,
   * `CHANNEL_UNAVAILABLE` when it cannot be reached or READY does not come in time.
   */
  async start(): Promise<void> {
    if (this.client) return;
    const { deps, token } = this.options;
    const client = this.options.createClient();
    this.listen(client);
    this.client = client;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeoutMs = this.options.startTimeoutMs ?? 30_000;
    const ready = new Promise<void>((resolve, reject) => {
      client.once(Events.ClientReady, () => resolve());
      this.gatewayClosed = reject;
      timer = setTimeout(() => reject(new ChannelError('discord', 'CHANNEL_UNAVAILABLE', `Discord gateway not ready within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      // Both: login() may hang on a gateway that closed for good, READY never comes after a 401.
      await Promise.all([client.login(token), ready]);
    } catch (error) {
      const channelError = toChannelError(error);
      this.state = { running: false, reason: channelError.message };
      this.client = undefined;
      await client.destroy().catch(() => undefined);
      throw channelError;
    } finally {
      clearTimeout(timer);
      this.gatewayClosed = undefined;
    }
    this.state = { running: true };
    deps.logger.info({ bot: client.user?.id, guilds: client.guilds.cache.size }, 'Discord gateway connected');
  }

  /** Closes the gateway, then lets admissions and reactions in flight finish, within `stopTimeoutMs`. */
  async stop(): Promise<void> {
    const { typing, deps } = this.options;
    const client = this.client;
    this.client = undefined;
    await client?.destroy();
    const timeoutMs = this.options.stopTimeoutMs ?? 4000;
    const deadline = deps.now() + timeoutMs;
    await this.runner.stop(timeoutMs);
    await settledWithin(Promise.allSettled([...this.reactions]), Math.max(0, deadline - deps.now()));
    typing.stopAll();
    this.state = { running: false, reason: 'stopped' };
  }

  /** Discord's side of the pipeline: its texts reply to the message; the acknowledgement is 👀 and "typing…", no placeholder. */
  private adapter(): IngressAdapter {
    const { api, typing } = this.options;
    return {
      platform: 'discord',
      say: async (target, text) => {
        // The pipeline's own texts are plain: escaped, so they show as written.
        await api.sendText(target.chatId, escapeDiscordText(text), replyReferenceFor(target.chatId, target.replyTo.messageId));
      },
      place: (message) => this.place(message),
      acknowledge: async (message) => {
        this.react(message);
        typing.start(message.chatId);
        return undefined;
      },
      // A message whose commit failed gets no reply to end its "typing…".
      withdraw: async (message) => typing.stop(message.chatId),
      refusal: 'tell',
    };
  }

  private receive(message: Message): void {
    const receivedAt = this.options.deps.now();
    void this.runner.run(message.channelId, () => this.admit(message, receivedAt));
  }

  private async admit(message: Message, receivedAt: number): Promise<IngressOutcome> {
    const { threads } = this.options;
    const botUserId = this.client?.user?.id ?? '';
    const facts = factsOf(message, botUserId);
    const isOwnThread = facts.thread === undefined ? false : await threads.isOwnThread(facts.thread.id);
    const decision = decideMessage(facts, { ...this.options.routing, ...this.rules, botUserId, isOwnThread });
    return this.pipeline.admit(decision, receivedAt);
  }

  /**
   * Starts the thread a message asked for (`decide.ts` `THREAD_NAME`), once it holds a place in
   * the intake: nothing is posted for a message the intake refuses. Without a thread (channel
   * type, permissions) it is answered in the channel.
   */
  private async place(message: PendingInbound): Promise<PendingInbound> {
    const { platformData, ...rest } = message;
    const name = platformData?.[THREAD_NAME];
    if (typeof name !== 'string') return message;
    const threadId = await this.options.threads.threadFor(message.chatId, message.messageId as string, name);
    if (threadId === undefined) return rest;
    return { ...rest, chatId: threadId, topicId: threadId, platformData: { [STARTER_CHANNEL_ID]: message.chatId } };
  }

  /** 👀 on the message, not awaited. Never rejects. */
  private react(message: PendingInbound): void {
    const { api, deps } = this.options;
    const starterChannelId = message.platformData?.[STARTER_CHANNEL_ID];
    const channelId = typeof starterChannelId === 'string' ? starterChannelId : message.chatId;
    const reaction = api.react(channelId, message.messageId as string, ACK_REACTION).catch((error: unknown) => {
      deps.logger.debug({ channelId, err: describeError(error) }, 'Discord acknowledgement reaction not added');
    });
    this.reactions.add(reaction);
    void reaction.finally(() => this.reactions.delete(reaction));
  }
}

/** A discord.js message as `decideMessage` sees it. */
export function factsOf(message: Message, botUserId: string): MessageFacts {
  const channel = message.channel;
  const isDm = message.guildId === null;
  const referencedId = message.reference?.messageId;
  const referenced = referencedId === undefined ? undefined : channel.messages.cache.get(referencedId);
  const rootId = referenced?.author.id === botUserId ? referenced.reference?.messageId : undefined;
  return {
    messageId: message.id,
    channelId: message.channelId,
    ...(message.guildId === null ? {} : { guildId: message.guildId }),
    ...(message.guild ? { guildName: message.guild.name } : {}),
    isDm,
    ...(channel.isThread() ? { thread: { id: channel.id, parentId: channel.parentId ?? '' } } : {}),
    canStartThread: channel.type === ChannelType.GuildText || channel.type === ChannelType.GuildAnnouncement,
    author: {
      id: message.author.id,
      isBot: message.author.bot,
      displayName: message.member?.displayName ?? message.author.displayName,
      username: message.author.username,
    },
    content: message.content,
    mentionNames: mentionNamesOf(message),
    ...(referencedId === undefined ? {} : { reference: { messageId: referencedId, ...(rootId ? { rootId } : {}) } }),
    files: discordInboundFiles(message),
  };
}

/**
 * The names of what `message` mentions, with no request: users from the event's `mentions`,
 * roles from the server's cache (GUILD_CREATE), channels from discord.js's channel cache.
 */
function mentionNamesOf(message: Message): MentionNames {
  const { mentions } = message;
  const channels = mentions.channels.filter((channel) => 'name' in channel && typeof channel.name === 'string');
  return {
    users: new Map(mentions.users.map((user) => [user.id, user.username])),
    roles: new Map(mentions.roles.map((role) => [role.id, role.name])),
    channels: new Map(channels.map((channel) => [channel.id, (channel as { name: string }).name])),
  };
}
