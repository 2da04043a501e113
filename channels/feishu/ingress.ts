import * as lark from '@larksuiteoapi/node-sdk';
import { type AdmissionRules, admissionRules, type PendingInbound } from '../../src/channel/ingress/decision.js';
import { type IngressAdapter, IngressPipeline } from '../../src/channel/ingress/pipeline.js';
import { IngressRunner } from '../../src/channel/ingress/runner.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { ChannelDeps, ChannelStatus, RequestWindow } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { within } from '../../src/time.js';
import { type FeishuApi, sdkLogger } from './api.js';
import type { CardRegistry } from './cards.js';
import { decideMessage } from './decide.js';
import { FEISHU_REACTIONS } from './egress.js';
import { FileBatches, isLoneFile, sourceMessageIds } from './file-batch.js';
import { FEISHU_LIMITS } from './limits.js';
import { escapeCardText, withSourcePreview } from './render.js';
import { type FeishuMessageEvent, feishuMessageEventSchema } from './schemas.js';
import type { GroupTopics } from './topics.js';

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
  /** How long `stop()` lets admissions in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
}

/**
 * Long connection and HTTP callbacks in: each event is read, decided (`decide.ts`) and admitted
 * through core's pipeline, one chat's in order. The long connection's handler (and the HTTP
 * route) only queue that work and return at once: `WSClient` acks a frame after the handler
 * returns, and Feishu pushes an unacked event again. So Feishu never redelivers a message the
 * intake refused, and the person is told instead; only the HTTP route, asked before it answers,
 * refuses a message the intake has no room for while Feishu will push it again. Lone files wait
 * for their batch first.
 */
export class FeishuIngress {
  private state: ChannelStatus = { running: false, reason: 'not started' };
  private ws: lark.WSClient | undefined;
  private botOpenId: string | undefined;
  private readonly rules: AdmissionRules;
  private readonly logger: Logger;
  private readonly pipeline: IngressPipeline;
  private readonly runner: IngressRunner;
  private readonly fileBatches = new FileBatches((merged, receivedAt) => this.admitBatch(merged, receivedAt));

  constructor(private readonly options: FeishuIngressOptions) {
    this.rules = admissionRules(options.deps, options.allowedUsers);
    this.logger = options.deps.logger;
    this.pipeline = new IngressPipeline(this.adapter(), options.deps, this.logger);
    this.runner = new IngressRunner(this.logger);
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
    await this.runner.stop(this.options.stopTimeoutMs ?? 4000);
    this.state = { running: false, reason: 'stopped' };
  }

  /**
   * Queues one `im.message.receive_v1` event once it has the shape we read; a malformed one is
   * dropped with one warning (and counts as taken: true, so Feishu does not push it again). False
   * when not running (HTTP answers 503 so Feishu retries). Never throws.
   */
  dispatch(raw: unknown): boolean {
    if (!this.state.running) return false;
    const receivedAt = this.options.deps.now();
    const parsed = feishuMessageEventSchema.safeParse(raw);
    if (!parsed.success) {
      logMalformedEvent(this.logger, 'feishu', 'im.message.receive_v1', parsed.error);
      return true;
    }
    this.receive(parsed.data, receivedAt);
    return true;
  }

  /**
   * HTTP mode: as {@link dispatch}, but a message the intake has no room for is `refused` while
   * Feishu will still push it again (sent within `eventRetryWindowMs`), so the route answers 503
   * and Feishu retries instead of the person being told to send it again (issue #15).
   */
  async dispatchCallback(raw: unknown, sentAt: number | undefined): Promise<'taken' | 'refused' | 'stopped'> {
    if (!this.state.running) return 'stopped';
    const willRedeliver = sentAt !== undefined && this.options.deps.now() - sentAt < FEISHU_LIMITS.eventRetryWindowMs;
    if (await this.pipeline.leavesForRedelivery(willRedeliver)) return 'refused';
    return this.dispatch(raw) ? 'taken' : 'stopped';
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

  /** Feishu's side of the pipeline: answers reply to the message, the acknowledgement is reactions and the running card. */
  private adapter(): IngressAdapter {
    const { api, pacer } = this.options;
    return {
      platform: 'feishu',
      say: async (target, text) => {
        await pacer.run(target.chatId, () => api.replyText(target.replyTo.messageId as string, text));
      },
      acknowledge: (message) => this.acknowledge(message),
      // No `withdraw`: `FeishuApi` has no call that deletes a message, so a running card whose commit failed stays.
      place: (message) => this.placeInConversation(message),
      // The event was acked when the handler returned: Feishu will not send it again.
      refusal: 'tell',
    };
  }

  private receive(event: FeishuMessageEvent, receivedAt: number): void {
    const decision = decideMessage(event, { ...this.rules, botOpenId: this.botOpenId });
    if (decision.kind === 'forward' && isLoneFile(decision.message)) {
      // Outside the chat's order: the person's next files must join this one while it waits. Its
      // batch takes its place in the chat's order when it closes; the runner still sees it for stop().
      const { deliveryKey, message } = decision;
      void this.runner.run(`lone-file:${message.messageId}`, () => this.batchLoneFile(deliveryKey, message, receivedAt));
      return;
    }
    // An event without a chat id is ignored: no chat's order to keep.
    void this.runner.run(event.message.chat_id ?? '', () => this.pipeline.admit(decision, receivedAt));
  }

  /** A lone file's event, claimed as every event is, joins its batch; the pipeline admits the batch once it closes. */
  private async batchLoneFile(deliveryKey: string | undefined, message: PendingInbound, receivedAt: number): Promise<void> {
    await this.pipeline.claimed(deliveryKey, () => this.fileBatches.add(message, receivedAt));
  }

  /** Admits a closed batch in its chat's order. False when refused (or failed), so its files' events run again if redelivered. */
  private async admitBatch(merged: PendingInbound, receivedAt: number): Promise<boolean> {
    const decision = { kind: 'forward', deliveryKey: `file-batch:${merged.messageId}`, message: merged } as const;
    const outcome = await this.runner.run(merged.chatId, () => this.pipeline.admit(decision, receivedAt));
    return outcome !== undefined && outcome !== 'refused';
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
    // The running text is the operator's words, not Markdown: it shows as written.
    const runningText = withSourcePreview(escapeCardText(this.options.runningText), typeof preview === 'string' ? preview : undefined);
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

  /** The OK reaction on each message it stands for and the running card, side by side. Resolves with the card's id; never rejects. */
  private async acknowledge(pending: PendingInbound): Promise<string | undefined> {
    const { api } = this.options;
    const [, placeholderId] = await Promise.all([
      Promise.all(
        sourceMessageIds(pending.messageId as string, pending.platformData).map((source) =>
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
    return placeholderId;
  }
}
