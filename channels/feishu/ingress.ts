import * as lark from '@larksuiteoapi/node-sdk';
import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { ChannelDeps, ChannelStatus, InboundFile, InboundMessage, InboundReservation, RequestWindow } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { settledWithin, within } from '../../src/time.js';
import { type FeishuApi, sdkLogger } from './api.js';
import type { CardRegistry } from './cards.js';
import { FEISHU_REACTIONS } from './egress.js';
import { FileBatches, isLoneFile, sourceMessageIds } from './file-batch.js';
import { encodeFileRef } from './files.js';
import { parseContent, stripBotMention, stripLeadingMentions } from './parse.js';
import { sourcePreview, withSourcePreview } from './render.js';
import { type FeishuMessageEvent, feishuMessageEventSchema } from './schemas.js';
import type { GroupTopics } from './topics.js';

export type { FeishuMessageEvent } from './schemas.js';

export interface FeishuIngressOptions {
  api: FeishuApi;
  deps: ChannelDeps;
  appId: string;
  appSecret: string;
  domain: string;
  mode: 'ws' | 'http';
  allowedUsers: readonly string[];
  runningText: string;
  /** Shared with egress: sends to one chat stay within Feishu's 5 QPS. */
  pacer: RequestWindow;
  /** Where CardKit running cards are remembered; absent = running cards are plain interactive cards. */
  cards?: CardRegistry;
  /** Group conversations Feishu's reply chain would split (answers to the agent's questions). */
  topics: GroupTopics;
  /** How long `stop()` lets acknowledgements in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
}

/** What a message turned into before any platform call: pure, see {@link decideMessage}. */
export type MessageDecision =
  | { kind: 'drop'; reason: string }
  | { kind: 'connect'; code: string; messageId: string; chatId: string; userId: string }
  | { kind: 'inbound'; message: PendingInbound };

/** An inbound message before its acknowledgement. */
export type PendingInbound = Omit<InboundMessage, 'replyTo' | 'receivedAt'>;

/**
 * Decides what to do with one event (reference §6.4, §5.3): people only; text/post/image/file,
 * non-empty; `/connect <code>` before `allowed_users`; p2p chats are one conversation, group
 * messages start one per root message (replies in a topic, including replies to the bot's cards,
 * carry the root's id and continue it; {@link GroupTopics} refines this with what it remembers).
 * Leading mentions are stripped to classify commands. A message inside a topic carries a short
 * preview of itself for the answer card, which shows what it answers.
 */
export function decideMessage(
  event: FeishuMessageEvent,
  context: { allowedUsers: ReadonlySet<string>; commandNames: ReadonlySet<string>; botOpenId: string | undefined; canBind: boolean },
): MessageDecision {
  const message = event.message;
  const userId = event.sender?.sender_id?.open_id;
  if (event.sender?.sender_type !== 'user') return { kind: 'drop', reason: 'not a person' };
  if (message?.message_id === undefined || message.chat_id === undefined || userId === undefined) return { kind: 'drop', reason: 'incomplete event' };
  if (context.botOpenId !== undefined && userId === context.botOpenId) return { kind: 'drop', reason: 'own message' };
  const mentions = message.mentions ?? [];
  const parsed = parseContent(message.message_type ?? '', message.content ?? '', mentions);
  if (parsed === undefined) return { kind: 'drop', reason: `unsupported message type` };
  const text = stripBotMention(parsed.text, mentions, context.botOpenId);
  if (text.trim() === '') return { kind: 'drop', reason: 'empty message' };
  const bare = stripLeadingMentions(text, mentions);
  const code = context.canBind ? parseConnectCommand(bare) : undefined;
  if (code !== undefined) return { kind: 'connect', code, messageId: message.message_id, chatId: message.chat_id, userId };
  if (context.allowedUsers.size > 0 && !context.allowedUsers.has(userId)) return { kind: 'drop', reason: 'not in allowed_users' };
  const isPrivateChat = message.chat_type === 'p2p';
  const isInTopic = Boolean(message.root_id || message.parent_id || message.thread_id);
  const preview = isPrivateChat || !isInTopic ? '' : sourcePreview(text);
  const topicId = isPrivateChat ? undefined : (message.root_id || message.thread_id || message.message_id);
  const files: InboundFile[] = parsed.files.map((file) => ({
    name: file.name,
    mimeType: file.type === 'image' ? 'image/png' : 'application/octet-stream',
    isImage: file.type === 'image',
    ref: encodeFileRef({ messageId: message.message_id as string, key: file.key, type: file.type }),
  }));
  return {
    kind: 'inbound',
    message: {
      channel: 'feishu',
      chatId: message.chat_id,
      ...(topicId === undefined ? {} : { topicId }),
      userId,
      senderIsAllowlisted: context.allowedUsers.has(userId),
      workspaceId: message.chat_id,
      messageId: message.message_id,
      text,
      kind: classifyText(bare, context.commandNames),
      isPrivateChat,
      ...(files.length > 0 ? { files } : {}),
      platformData: {
        ...(message.root_id ? { rootId: message.root_id } : {}),
        ...(message.parent_id ? { parentId: message.parent_id } : {}),
        ...(message.thread_id ? { threadId: message.thread_id } : {}),
        ...(preview === '' ? {} : { sourcePreview: preview }),
      },
    },
  };
}

/**
 * Events in, acknowledgements out. The long connection's handler (and the HTTP route) only
 * queue work and return at once: `WSClient` acks a frame after the handler returns, and Feishu
 * pushes an unacked event again. Each event id is claimed once in `deps.deliveries` (the
 * EventDispatcher does not dedupe), so a redelivery runs nothing.
 */
export class FeishuIngress {
  private state: ChannelStatus = { running: false, reason: 'not started' };
  private ws: lark.WSClient | undefined;
  private botOpenId: string | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly allowedUsers: ReadonlySet<string>;
  private readonly commandNames: ReadonlySet<string>;
  private readonly logger: Logger;
  private readonly fileBatches = new FileBatches((merged) => this.admit(merged));

  constructor(private readonly options: FeishuIngressOptions) {
    this.allowedUsers = new Set(options.allowedUsers);
    this.commandNames = new Set(options.deps.commands.map((command) => command.name));
    this.logger = options.deps.logger;
  }

  status(): ChannelStatus {
    return { ...this.state };
  }

  /**
   * Checks the app's credentials (a tenant token), learns the bot's open_id, then opens the long
   * connection (`ws` mode) or starts taking callbacks (`http`).
   *
   * @throws ChannelError `CHANNEL_UNAUTHORIZED` when Feishu refuses the credentials.
   */
  async start(): Promise<void> {
    if (this.state.running) return;
    try {
      await this.options.api.verifyCredentials();
      this.botOpenId = await this.options.api.botOpenId().catch(() => undefined);
      if (this.options.mode === 'ws') await this.openLongConnection();
    } catch (error) {
      this.ws?.close({ force: true });
      this.ws = undefined;
      const channelError = error instanceof ChannelError ? error : new ChannelError('feishu', 'CHANNEL_UNAVAILABLE', 'Feishu long connection failed', { cause: error });
      this.state = { running: false, reason: `${channelError.code}: ${channelError.message}` };
      throw channelError;
    }
    this.state = { running: true };
  }

  async stop(): Promise<void> {
    this.ws?.close({ force: true });
    this.ws = undefined;
    this.fileBatches.closeAll();
    await settledWithin(Promise.allSettled([...this.inFlight]), this.options.stopTimeoutMs ?? 4000);
    this.state = { running: false, reason: 'stopped' };
  }

  /**
   * Queues one `im.message.receive_v1` event once it has the shape we read; a malformed one is
   * dropped with one warning (and counts as taken: true, so Feishu does not push it again). False
   * when not running (HTTP answers 503 so Feishu retries). Never throws.
   */
  dispatch(raw: unknown): boolean {
    if (!this.state.running) return false;
    const parsed = feishuMessageEventSchema.safeParse(raw);
    if (!parsed.success) {
      logMalformedEvent(this.logger, 'feishu', 'im.message.receive_v1', parsed.error);
      return true;
    }
    const work = this.handle(parsed.data).catch((error: unknown) => {
      this.logger.error({ err: describeError(error) }, 'Feishu event failed');
    });
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return true;
  }

  private async openLongConnection(): Promise<void> {
    const dispatcher = new lark.EventDispatcher({ loggerLevel: lark.LoggerLevel.error, logger: sdkLogger(this.logger) }).register({
      'im.message.receive_v1': async (data: unknown) => {
        // Return at once: the frame is acked when this returns.
        this.dispatch(data);
      },
      'im.message.message_read_v1': async () => undefined,
    } as never);
    let onReady: () => void = () => undefined;
    let onError: (error: Error) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      onReady = resolve;
      onError = reject;
    });
    const ws = new lark.WSClient({
      appId: this.options.appId,
      appSecret: this.options.appSecret,
      domain: this.options.domain,
      loggerLevel: lark.LoggerLevel.error,
      logger: sdkLogger(this.logger),
      onReady: () => onReady(),
      onError: (error: Error) => onError(error),
      onReconnected: () => this.logger.info('Feishu long connection restored'),
    });
    this.ws = ws;
    await ws.start({ eventDispatcher: dispatcher });
    await within(ready, 30_000, () => new ChannelError('feishu', 'CHANNEL_UNAVAILABLE', 'Feishu long connection did not open within 30 s'));
  }

  private async handle(event: FeishuMessageEvent): Promise<void> {
    const { deps } = this.options;
    const decision = decideMessage(event, {
      allowedUsers: this.allowedUsers,
      commandNames: this.commandNames,
      botOpenId: this.botOpenId,
      canBind: deps.binder !== undefined,
    });
    if (decision.kind === 'drop') {
      this.logger.debug({ reason: decision.reason }, 'Feishu event dropped');
      return;
    }
    const claimKey = `event:${event.event_id ?? event.message?.message_id}`;
    const claim = await deps.deliveries.begin(claimKey, 'im.message.receive_v1');
    if (claim.kind !== 'new') {
      this.logger.debug({ claim: claim.kind }, 'Feishu event already handled');
      return;
    }
    let isDone = false;
    try {
      if (decision.kind === 'connect') {
        const answer = await (deps.binder as NonNullable<ChannelDeps['binder']>).bind('feishu', {
          identity: { externalAccountId: decision.userId, workspaceId: decision.chatId },
          code: decision.code,
          metadata: { chat_id: decision.chatId, message_id: decision.messageId },
        });
        await this.options.pacer.run(decision.chatId, () => this.options.api.replyText(decision.messageId, answer));
        isDone = true;
        return;
      }
      const pending = decision.message;
      isDone = isLoneFile(pending) ? await this.fileBatches.add(pending) : await this.admit(pending);
    } finally {
      await (isDone ? deps.deliveries.finish(claimKey, {}) : deps.deliveries.fail(claimKey)).catch((error: unknown) => {
        this.logger.warn({ err: describeError(error) }, 'Feishu delivery claim not recorded');
      });
    }
  }

  /**
   * A group message's conversation, as {@link GroupTopics} chooses it. Only once the message is
   * claimed and has its place in the intake: choosing may use up a pending question.
   */
  private async placeInConversation(pending: PendingInbound): Promise<PendingInbound> {
    if (pending.isPrivateChat) return pending;
    const ids = pending.platformData ?? {};
    const choice = await this.options.topics.choose({
      chatId: pending.chatId,
      userId: pending.userId,
      messageId: pending.messageId as string,
      ...(typeof ids.rootId === 'string' ? { rootId: ids.rootId } : {}),
      ...(typeof ids.parentId === 'string' ? { parentId: ids.parentId } : {}),
      ...(typeof ids.threadId === 'string' ? { threadId: ids.threadId } : {}),
      isCommand: pending.kind === 'command',
    });
    return {
      ...pending,
      topicId: choice.topicId,
      ...(choice.answersQuestion ? { platformData: { ...ids, answersQuestion: true } } : {}),
    };
  }

  /**
   * The running card, replying to the person's message: a CardKit streaming card when enabled
   * (falling back, e.g. without the `cardkit:card:write` scope, to a plain interactive card).
   * Only the reply counts against the chat's 5 sends a second; creating the card entity does not.
   * Resolves with the card message's id.
   */
  private async postRunningCard(pending: PendingInbound): Promise<string> {
    const { api, cards, pacer } = this.options;
    const messageId = pending.messageId as string;
    const preview = pending.platformData?.sourcePreview;
    const runningText = withSourcePreview(this.options.runningText, typeof preview === 'string' ? preview : undefined);
    const cardId =
      cards === undefined
        ? undefined
        : await api.createStreamingCard(runningText).catch((error: unknown) => {
            this.logger.info({ err: describeError(error) }, 'Feishu CardKit card not created; using an interactive card');
            return undefined;
          });
    return pacer.run(pending.chatId, async () => {
      if (cards !== undefined && cardId !== undefined) {
        try {
          const cardMessageId = await api.replyCardEntity(messageId, cardId);
          cards.remember(cardMessageId, cardId);
          return cardMessageId;
        } catch (error) {
          this.logger.info({ err: describeError(error) }, 'Feishu CardKit card not posted; using an interactive card');
        }
      }
      return api.replyCard(messageId, runningText);
    });
  }

  /**
   * Reserve, place in its conversation, acknowledge (OK reaction on each message it holds +
   * running card), commit. False when the intake refused.
   */
  private async admit(unplaced: PendingInbound): Promise<boolean> {
    const { deps, api } = this.options;
    let reservation: InboundReservation;
    try {
      reservation = await deps.intake.reserve();
    } catch (error) {
      this.logger.warn({ err: describeError(error) }, 'Feishu message refused: intake full');
      return false;
    }
    try {
      const pending = await this.placeInConversation(unplaced);
      const messageId = pending.messageId as string;
      const [, placeholderId] = await Promise.all([
        Promise.all(
          sourceMessageIds(messageId, pending.platformData).map((source) =>
            api.addReaction(source, FEISHU_REACTIONS.received).catch((error: unknown) => {
              this.logger.debug({ err: describeError(error) }, 'Feishu reaction not added');
            }),
          ),
        ),
        this.postRunningCard(pending).catch((error: unknown) => {
          this.logger.warn({ err: describeError(error) }, 'Feishu running card not sent');
          return undefined;
        }),
      ]);
      await reservation.commit({
        ...pending,
        replyTo: { messageId, ...(placeholderId === undefined ? {} : { placeholderId }) },
        receivedAt: deps.now(),
      });
      return true;
    } catch (error) {
      reservation.release();
      throw error;
    }
  }
}
