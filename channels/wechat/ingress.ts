import { admissionRules, type PendingInbound } from '../../src/channel/ingress/decision.js';
import { type IngressAdapter, type IngressOutcome, IngressPipeline, replyTargetOf } from '../../src/channel/ingress/pipeline.js';
import { IngressRunner } from '../../src/channel/ingress/runner.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelDeps, ChannelStatus, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { settledWithin, sleep } from '../../src/time.js';
import { type IlinkClient, refusalCode } from './api.js';
import type { ContextTokens } from './context-tokens.js';
import { type DecideContext, decideWeChatMessage } from './decide.js';
import { WECHAT_LIMITS } from './limits.js';
import { getUpdatesResponseSchema, wechatMessageSchema } from './schemas.js';
import type { WeChatSender } from './sender.js';
import { WECHAT_TEXTS } from './texts.js';

export interface WeChatIngressOptions {
  client: IlinkClient;
  sender: WeChatSender;
  contextTokens: ContextTokens;
  deps: ChannelDeps;
  logger: Logger;
  /** Shared with egress: no acknowledgement goes to a chat that is rate limited. */
  gate: RateGate;
  allowedUsers: readonly string[];
  /** How long iLink holds one `getupdates`, in ms, until the server asks for another. */
  pollingTimeoutMs: number;
  pollingRetryDelayMs: number;
  respectServerLongPollTimeout: boolean;
  /**
   * Resolves with a bot token when there is none yet (the QR-code login); absent = a token is
   * configured. Rejects with a `ChannelError` whose message is the status reason.
   */
  login?: (signal: AbortSignal) => Promise<void>;
  /** Called once when the session expired (the QR login forgets its stored token). Never rejects. */
  onSessionExpired?: () => Promise<void>;
  /** How long `stop()` lets acknowledgements in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
}

/** The cursor's key in the channel state (database): it survives restarts and a lease handover. */
export const CURSOR_KEY = 'getupdates-cursor';
/** How long polling waits before asking again for messages the intake refused. */
const REFUSED_RETRY_MS = 1000;

/**
 * The transport: `getupdates` long polling with iLink's cursor (`get_updates_buf`). Each batch is
 * admitted through core's pipeline, each person's messages in order, and the cursor is saved
 * only once the whole batch was handled: a crash re-reads the batch, and the delivery claims
 * (`<user>:<message_id>`) keep what was taken from being taken twice. A message the intake
 * refused leaves the cursor where it was, so iLink sends the batch again a second later.
 * `errcode -14` (the session expired) stops polling; the status says so.
 */
export class WeChatIngress {
  private state: ChannelStatus = { running: false, reason: 'not started' };
  private polling: Promise<void> | undefined;
  private abort: AbortController | undefined;
  private cursor = '';
  private nextTimeoutMs: number;
  private readonly context: DecideContext;
  private readonly pipeline: IngressPipeline;
  private readonly runner: IngressRunner;

  constructor(private readonly options: WeChatIngressOptions) {
    this.context = admissionRules(options.deps, options.allowedUsers);
    this.nextTimeoutMs = options.pollingTimeoutMs;
    this.pipeline = new IngressPipeline(this.adapter(), options.deps, options.logger);
    this.runner = new IngressRunner(options.logger);
  }

  status(): ChannelStatus {
    return { ...this.state };
  }

  /** Loads the cursor and polls in the background (after the QR-code login, when there is no token). */
  async start(): Promise<void> {
    if (this.polling) return;
    const stored = await this.options.deps.state.get(CURSOR_KEY);
    this.cursor = typeof stored === 'string' ? stored : '';
    const abort = new AbortController();
    this.abort = abort;
    this.state = this.options.login ? { running: false, reason: WECHAT_TEXTS.waitingForLogin } : { running: true };
    this.polling = this.run(abort.signal).catch((error: unknown) => {
      if (abort.signal.aborted) return;
      this.state = { running: false, reason: describeError(error).message };
      this.options.logger.error({ err: describeError(error) }, 'WeChat polling stopped');
    });
    this.options.logger.info({ resumed: this.cursor !== '' }, 'WeChat polling started');
  }

  /** Stops polling (the long poll is aborted), then lets acknowledgements in flight finish, within `stopTimeoutMs`. */
  async stop(): Promise<void> {
    const polling = this.polling;
    if (!polling) return;
    const { deps } = this.options;
    const deadline = deps.now() + (this.options.stopTimeoutMs ?? 4000);
    this.abort?.abort(new Error('stopping'));
    await settledWithin(polling, Math.max(0, deadline - deps.now()));
    await this.runner.stop(Math.max(0, deadline - deps.now()));
    this.polling = undefined;
    this.state = { running: false, reason: 'stopped' };
  }

  private async run(signal: AbortSignal): Promise<void> {
    if (this.options.login) {
      await this.options.login(signal);
      if (signal.aborted) return;
      this.state = { running: true };
    }
    while (!signal.aborted) {
      const outcome = await this.pollOnce(signal);
      if (outcome === 'expired') return;
      if (outcome === 'failed') await sleep(this.options.pollingRetryDelayMs, signal).catch(() => undefined);
      if (outcome === 'refused') await sleep(REFUSED_RETRY_MS, signal).catch(() => undefined);
    }
  }

  /** One `getupdates` and its batch. */
  private async pollOnce(signal: AbortSignal): Promise<'handled' | 'refused' | 'failed' | 'expired'> {
    const { logger } = this.options;
    let answer: Awaited<ReturnType<typeof this.getUpdates>>;
    try {
      answer = await this.getUpdates(signal);
    } catch (error) {
      if (signal.aborted) return 'handled';
      logger.warn({ err: describeError(error) }, 'WeChat getupdates failed; retrying');
      this.state = { running: true, reason: `${describeError(error).message} (retrying)` };
      return 'failed';
    }
    const code = refusalCode(answer);
    if (code === WECHAT_LIMITS.sessionExpiredErrcode) {
      // The token is dead: polling again would only be refused. A new token (or QR login) and a restart bring it back.
      await this.options.onSessionExpired?.().catch((error: unknown) => {
        logger.warn({ err: describeError(error) }, 'WeChat stored login not forgotten');
      });
      this.state = { running: false, reason: WECHAT_TEXTS.sessionExpired };
      logger.error('WeChat session expired (errcode -14); polling stopped');
      return 'expired';
    }
    if (code !== 0) {
      logger.warn({ errcode: code }, 'WeChat getupdates refused; retrying');
      this.state = { running: true, reason: `WeChat getupdates refused: errcode ${code} (retrying)` };
      return 'failed';
    }
    this.state = { running: true };
    if (this.options.respectServerLongPollTimeout && answer.longpolling_timeout_ms !== undefined && answer.longpolling_timeout_ms > 0) {
      this.nextTimeoutMs = answer.longpolling_timeout_ms;
    }
    const outcomes = await this.admitBatch(answer.msgs);
    if (outcomes.includes('refused')) return 'refused';
    const next = answer.get_updates_buf;
    if (next !== undefined && next !== '' && next !== this.cursor) {
      // Saved only now that every message of the batch was handled (taken, refused as a duplicate, or dropped).
      await this.options.deps.state.set(CURSOR_KEY, next);
      this.cursor = next;
    }
    return 'handled';
  }

  private getUpdates(signal: AbortSignal) {
    const timeoutMs = Math.max(this.nextTimeoutMs + WECHAT_LIMITS.longPollSlackMs, WECHAT_LIMITS.minLongPollTimeoutMs);
    return this.options.client.post('getupdates', { get_updates_buf: this.cursor }, getUpdatesResponseSchema, { timeoutMs, signal });
  }

  /** Admits each message on its person's chain; one that fails or is malformed never stops the others. */
  private async admitBatch(messages: readonly unknown[]): Promise<IngressOutcome[]> {
    const { deps, logger, contextTokens } = this.options;
    const refusedChats = new Set<string>();
    const admissions = messages.map((raw) => {
      const checked = wechatMessageSchema.safeParse(raw);
      if (!checked.success) {
        logMalformedEvent(logger, 'wechat', 'message', checked.error);
        return Promise.resolve<IngressOutcome>('ignored');
      }
      const message = checked.data;
      const receivedAt = deps.now();
      const decision = decideWeChatMessage(message, this.context);
      const chatId = message.from_user_id;
      return this.runner
        .run(chatId, async (): Promise<IngressOutcome> => {
          // After a refusal the chat's later messages wait too: they come again after it, in order.
          if (refusedChats.has(chatId)) return 'refused';
          if (message.context_token && (decision.kind === 'forward' || decision.kind === 'bind')) {
            await contextTokens.remember(chatId, message.context_token);
          }
          const outcome = await this.pipeline.admit(decision, receivedAt);
          if (outcome === 'refused') refusedChats.add(chatId);
          return outcome;
        })
        .then((outcome) => outcome ?? 'ignored');
    });
    return Promise.all(admissions);
  }

  /** WeChat's side of the pipeline: a standing acknowledgement (it cannot be edited) and answers. */
  private adapter(): IngressAdapter {
    return {
      platform: 'wechat',
      say: async (target, text) => {
        await this.options.sender.text(target, text);
      },
      acknowledge: async (message: PendingInbound) => {
        if (message.kind === 'chat') await this.sendIfOpen(replyTargetOf(message), WECHAT_TEXTS.working);
        // Never a placeholder: the reply cannot edit it, so it comes as new messages after it.
        return undefined;
      },
      refusal: 'redeliver',
    };
  }

  /** Posts `text` unless the chat is rate limited. Never rejects. */
  private async sendIfOpen(target: ReplyTarget, text: string): Promise<void> {
    const { gate, sender, logger } = this.options;
    if (!gate.isOpen(target.chatId)) return;
    try {
      await sender.text(target, text);
    } catch (error) {
      if (error instanceof ChannelError && error.retryAfterMs !== undefined) gate.block(target.chatId, error.retryAfterMs);
      logger.warn({ err: describeError(error) }, 'WeChat acknowledgement not sent');
    }
  }
}
