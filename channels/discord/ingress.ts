import { ChannelType, type Client, Events, type Message } from 'discord.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { ChannelDeps, ChannelStatus, ChatBinder, InboundMessage, InboundReservation } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import { settledWithin } from '../../src/time.js';
import type { DiscordApi } from './api.js';
import { gatewayCloseError, toChannelError } from './errors.js';
import { discordInboundFiles } from './files.js';
import { decideMessage, type MessageFacts, type Route, type RoutingContext } from './routing.js';
import { discordMessageCreateSchema } from './schemas.js';
import type { ThreadMap } from './threads.js';
import type { TypingIndicators } from './typing.js';

/** The reaction that says "seen, working on it" (reference §6.3 uses ✅; 👀 reads as "looking"). */
export const ACK_REACTION = '👀';

export interface DiscordIngressOptions {
  /** A new gateway client for each start: discord.js does not log a destroyed client in again. */
  createClient: () => Client;
  token: string;
  api: DiscordApi;
  threads: ThreadMap;
  typing: TypingIndicators;
  deps: ChannelDeps;
  routing: Omit<RoutingContext, 'botUserId' | 'isOwnThread' | 'canBind' | 'commandNames'>;
  /** How long `start()` waits for READY and the servers; default 30000 ms. */
  startTimeoutMs?: number;
  /** How long `stop()` lets acknowledgements in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
}

/**
 * The gateway half: discord.js holds the websocket (heartbeats, RESUME after a drop, a new
 * IDENTIFY after an invalid session), hands each MESSAGE_CREATE here, and this decides,
 * reserves, acknowledges and commits. Each channel's messages are handled in order on their
 * own promise chain.
 */
export class DiscordIngress {
  private state: ChannelStatus = { running: false, reason: 'not started' };
  /** The gateway client while started (or starting). */
  private client: Client | undefined;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly commandNames: ReadonlySet<string>;
  /** Set while `start()` waits for READY: a gateway that closes for good fails the start. */
  private gatewayClosed: ((error: Error) => void) | undefined;

  constructor(private readonly options: DiscordIngressOptions) {
    this.commandNames = new Set(options.deps.commands.map((command) => command.name));
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

  /** Closes the gateway, then lets acknowledgements in flight finish, within `stopTimeoutMs`. */
  async stop(): Promise<void> {
    const { typing, deps } = this.options;
    const client = this.client;
    this.client = undefined;
    await client?.destroy();
    const deadline = deps.now() + (this.options.stopTimeoutMs ?? 4000);
    while (this.inFlight.size > 0 && deps.now() < deadline) {
      await settledWithin(Promise.allSettled([...this.inFlight]), Math.max(0, deadline - deps.now()));
    }
    typing.stopAll();
    this.state = { running: false, reason: 'stopped' };
  }

  private receive(message: Message): void {
    const receivedAt = this.options.deps.now();
    this.enqueue(message.channelId, () => this.handle(message, receivedAt));
  }

  private async handle(discordMessage: Message, receivedAt: number): Promise<void> {
    const { deps, threads } = this.options;
    const botUserId = this.client?.user?.id ?? '';
    const facts = factsOf(discordMessage, botUserId);
    const isOwnThread = facts.thread === undefined ? false : await threads.isOwnThread(facts.thread.id);
    const decision = decideMessage(facts, {
      ...this.options.routing,
      botUserId,
      isOwnThread,
      canBind: deps.binder !== undefined,
      commandNames: this.commandNames,
    });
    if (decision.action === 'ignore') {
      const level = decision.reason === 'not-allowed' || decision.reason === 'guild-not-allowed' ? 'info' : 'debug';
      deps.logger[level]({ channelId: facts.channelId, userId: facts.author.id, reason: decision.reason }, 'Discord message ignored');
      return;
    }
    if (decision.action === 'bind') {
      // The code stays out of logs: only the binder's reply is sent, and it never contains it.
      const text = await (deps.binder as ChatBinder).bind('discord', decision.request);
      await this.options.api.sendText(facts.channelId, text, facts.messageId);
      return;
    }
    await this.acknowledge(facts, decision.route, decision.message, receivedAt);
  }

  /** Reserve before any Discord side effect (reference §6.3), then thread, reaction, typing, commit. */
  private async acknowledge(facts: MessageFacts, route: Route, message: Omit<InboundMessage, 'replyTo' | 'receivedAt' | 'chatId' | 'topicId'>, receivedAt: number): Promise<void> {
    const { deps, api, typing } = this.options;
    let reservation: InboundReservation;
    try {
      reservation = await deps.intake.reserve();
    } catch (error) {
      deps.logger.warn({ channelId: facts.channelId, err: describeError(error) }, 'inbound intake refused a Discord message');
      return;
    }
    try {
      const { chatId, topicId } = await this.placeOf(facts, route);
      this.track(
        api.react(facts.channelId, facts.messageId, ACK_REACTION).catch((error: unknown) => {
          deps.logger.debug({ channelId: facts.channelId, err: describeError(error) }, 'Discord acknowledgement reaction not added');
        }),
      );
      typing.start(chatId);
      await reservation.commit({ ...message, chatId, ...(topicId === undefined ? {} : { topicId }), receivedAt, replyTo: { messageId: facts.messageId } });
    } catch (error) {
      reservation.release();
      typing.stop(facts.channelId);
      deps.logger.warn({ channelId: facts.channelId, err: describeError(error) }, 'Discord inbound commit failed');
    }
  }

  /** The conversation and the channel the reply goes to (see `ids.ts`). */
  private async placeOf(facts: MessageFacts, route: Route): Promise<{ chatId: string; topicId?: string }> {
    switch (route.kind) {
      case 'dm':
        return { chatId: facts.channelId };
      case 'thread':
        return { chatId: route.threadId, topicId: route.threadId };
      case 'channel':
        return { chatId: facts.channelId, topicId: route.topicId };
      case 'new-thread': {
        const threadId = await this.options.threads.threadFor(facts.channelId, facts.messageId, route.name);
        return threadId === undefined ? { chatId: facts.channelId, topicId: facts.messageId } : { chatId: threadId, topicId: threadId };
      }
    }
  }

  private track(promise: Promise<void>): void {
    this.inFlight.add(promise);
    promise.finally(() => this.inFlight.delete(promise));
  }

  private enqueue(channelId: string, task: () => Promise<void>): void {
    const { logger } = this.options.deps;
    const next = (this.chains.get(channelId) ?? Promise.resolve()).then(task).catch((error: unknown) => {
      logger.error({ channelId, err: describeError(error) }, 'Discord message handling failed');
    });
    this.chains.set(channelId, next);
    this.track(next);
    next.finally(() => {
      if (this.chains.get(channelId) === next) this.chains.delete(channelId);
    });
  }
}

/** A discord.js message as routing sees it. */
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
    ...(referencedId === undefined ? {} : { reference: { messageId: referencedId, ...(rootId ? { rootId } : {}) } }),
    files: discordInboundFiles(message),
  };
}

