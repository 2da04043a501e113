import type { Bot } from 'grammy';
import type { Message } from 'grammy/types';
import { type AdmissionRules, admissionRules, type PendingInbound } from '../../src/channel/ingress/decision.js';
import { type IngressAdapter, IngressPipeline } from '../../src/channel/ingress/pipeline.js';
import { IngressRunner } from '../../src/channel/ingress/runner.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelDeps, ChannelStatus } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import { settledWithin, sleep } from '../../src/time.js';
import { decideMessage, TELEGRAM_REPLIES } from './decide.js';
import { sendTelegramText } from './egress.js';
import { notRunningReason, toChannelError } from './errors.js';
import type { GroupPacer } from './pacing.js';
import { telegramMessageSchema } from './schemas.js';

/** Why a start's getMe was aborted: its deadline passed, or the channel was stopped meanwhile. */
const START_TIMED_OUT = 'start timed out';
const START_ABANDONED = 'start abandoned';

export interface TelegramIngressOptions {
  bot: Bot;
  deps: ChannelDeps;
  /** Shared with egress: no placeholder goes to a chat that is rate limited. */
  gate: RateGate;
  /** Nor to a group whose 20 messages a minute are spent. */
  pacer: GroupPacer;
  allowedUsers: readonly number[];
  pollingTimeoutSeconds: number;
  /** How long `stop()` lets acknowledgements in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
  /** How long `start()` waits for Telegram to answer getMe (grammY retries network errors); default 30000 ms. */
  startTimeoutMs?: number;
}

/** How long polling waits before asking again for updates the intake refused. */
const REFUSED_RETRY_MS = 1000;
/** Far more than one getUpdates batch (100). */
const TAKEN_UPDATES_KEPT = 1000;

/**
 * The transport: long polling. grammY hands updates over one at a time and waits for each
 * handler before polling again, so handlers only decide (`decide.ts`) and queue the message on
 * core's pipeline, each chat's in order, while other chats and polling go on. What the intake
 * refused is left with Telegram: the next poll asks for it again.
 */
export class TelegramIngress {
  private state: ChannelStatus = { running: false, reason: 'not started' };
  private polling: Promise<void> | undefined;
  private startAbort: AbortController | undefined;
  private isStopping = false;
  private readonly rules: AdmissionRules<number>;
  private readonly pipeline: IngressPipeline;
  private readonly runner: IngressRunner;
  /** The first update the intake refused since the last poll: the next poll asks from it again. */
  private firstRefusedUpdateId: number | undefined;
  /** Updates taken (recently), so those fetched again after a refusal are not taken twice. */
  private readonly takenUpdateIds = new Set<number>();
  /** Chats with a refused update since the last poll. */
  private readonly refusedChats = new Set<string>();

  constructor(private readonly options: TelegramIngressOptions) {
    this.rules = admissionRules(options.deps, options.allowedUsers);
    this.pipeline = new IngressPipeline(this.adapter(), options.deps, options.deps.logger);
    this.runner = new IngressRunner(options.deps.logger);
    const { bot, deps } = options;
    bot.on('message', (ctx) => {
      const checked = telegramMessageSchema.safeParse(ctx.message);
      // grammY confirms the update either way: a malformed one is not fetched again.
      if (!checked.success) logMalformedEvent(deps.logger, 'telegram', 'message', checked.error);
      else this.receive(ctx.message, ctx.update.update_id);
    });
    // Telegram counts an update as confirmed once getUpdates asks past it. The next poll waits
    // until every update taken so far is committed (journaled) or answered, so a crash never loses
    // one that Telegram will not send again (issue #15). An update the intake refused (full, or
    // closing) is not confirmed: the poll asks from it again, a second later, and Telegram keeps
    // it until there is room.
    bot.api.config.use(async (prev, method, payload, signal) => {
      if (method !== 'getUpdates') return prev(method, payload, signal);
      await this.runner.idle();
      const refused = this.firstRefusedUpdateId;
      this.firstRefusedUpdateId = undefined;
      this.refusedChats.clear();
      if (refused === undefined) return prev(method, payload, signal);
      // grammY types its signal with the abort-controller shim; the runtime object is the standard one.
      if (!this.isStopping) await sleep(REFUSED_RETRY_MS, signal as AbortSignal | undefined).catch(() => undefined);
      return prev(method, { ...payload, offset: refused } as typeof payload, signal);
    });
    bot.catch((error) => {
      deps.logger.error({ err: describeError(error.error), updateId: error.ctx.update.update_id }, 'update handler failed');
    });
  }

  status(): ChannelStatus {
    return { ...this.state };
  }

  /**
   * Checks the token (getMe), then polls in the background.
   *
   * @throws ChannelError `CHANNEL_UNAUTHORIZED` when Telegram rejects the token; the status then
   * says why.
   */
  async start(): Promise<void> {
    if (this.polling) return;
    const { bot, deps, pollingTimeoutSeconds } = this.options;
    const abort = new AbortController();
    this.startAbort = abort;
    const startTimeoutMs = this.options.startTimeoutMs ?? 30_000;
    const timer = setTimeout(() => abort.abort(START_TIMED_OUT), startTimeoutMs);
    try {
      // grammY types its signal with the abort-controller shim; the runtime object is the standard one.
      await bot.init(abort.signal as Parameters<Bot['init']>[0]);
    } catch (error) {
      // grammY keeps retrying 5xx and network errors; only our deadline ends it, and says nothing of why.
      const failure = !abort.signal.aborted
        ? error
        : abort.signal.reason === START_TIMED_OUT
          ? new ChannelError('telegram', 'CHANNEL_UNAVAILABLE', `Telegram did not answer getMe within ${Math.round(startTimeoutMs / 1000)} s`, { status: 502 })
          : new ChannelError('telegram', 'CHANNEL_UNAVAILABLE', 'start abandoned: the channel is stopping', { status: 502 });
      this.state = { running: false, reason: notRunningReason(failure, 'start') };
      throw toChannelError(failure);
    } finally {
      clearTimeout(timer);
      this.startAbort = undefined;
    }
    await this.publishCommandMenu();
    this.isStopping = false;
    this.state = { running: true };
    this.polling = bot.start({ timeout: pollingTimeoutSeconds, drop_pending_updates: false }).then(
      () => {
        if (!this.isStopping) this.state = { running: false, reason: 'Telegram polling stopped' };
      },
      (error: unknown) => {
        // bot.stop() right after start aborts grammY's pending call: that is a clean stop.
        if (this.isStopping) return;
        this.state = { running: false, reason: notRunningReason(error, 'polling') };
        deps.logger.error({ err: describeError(toChannelError(error)) }, 'Telegram polling stopped');
      },
    );
    deps.logger.info({ bot: bot.botInfo.username }, 'Telegram polling started');
  }

  /**
   * Stops polling (confirming the updates already taken), then lets their acknowledgements
   * finish, all within `stopTimeoutMs`.
   */
  async stop(): Promise<void> {
    this.startAbort?.abort(START_ABANDONED);
    const polling = this.polling;
    if (!polling) return;
    this.isStopping = true;
    const deadline = this.options.deps.now() + (this.options.stopTimeoutMs ?? 4000);
    const remaining = (): number => Math.max(0, deadline - this.options.deps.now());
    await settledWithin(
      this.options.bot.stop().catch((error: unknown) => {
        this.options.deps.logger.warn({ err: describeError(toChannelError(error)) }, 'Telegram stop was not clean');
      }),
      remaining(),
    );
    await settledWithin(polling, remaining());
    await this.runner.stop(remaining());
    this.polling = undefined;
    this.state = { running: false, reason: 'stopped' };
  }

  /**
   * Lists core's commands in Telegram's "/" menu. Best effort: a bot without the menu still works,
   * so a failure is only logged.
   */
  private async publishCommandMenu(): Promise<void> {
    const { bot, deps } = this.options;
    const menu = deps.commands.map(({ name, description }) => ({ command: name, description }));
    try {
      await bot.api.setMyCommands(menu);
    } catch (error) {
      deps.logger.warn({ err: describeError(toChannelError(error)) }, 'Telegram command menu not set');
    }
  }

  /** Telegram's side of the pipeline: the placeholder (chat only) and answers, replying to the message. */
  private adapter(): IngressAdapter {
    return {
      platform: 'telegram',
      say: async (target, text) => {
        await this.sendIfOpen(target.chatId, text, target.replyTo.messageId);
      },
      acknowledge: (message: PendingInbound) =>
        message.kind === 'chat' ? this.sendIfOpen(message.chatId, TELEGRAM_REPLIES.working, message.messageId) : Promise.resolve(undefined),
      withdraw: async (message, placeholderId) => {
        if (placeholderId !== undefined) await this.withdraw(message.chatId, placeholderId);
      },
      refusal: 'redeliver',
    };
  }

  private receive(message: Message, updateId: number): void {
    // Fetched again after a refusal of an earlier update: what was taken then is not taken twice.
    if (this.takenUpdateIds.has(updateId)) return;
    this.takenUpdateIds.add(updateId);
    if (this.takenUpdateIds.size > TAKEN_UPDATES_KEPT) this.takenUpdateIds.delete(this.takenUpdateIds.values().next().value as number);
    const receivedAt = this.options.deps.now();
    const decision = decideMessage(message, { ...this.rules, botUsername: this.options.bot.botInfo.username });
    const chatId = String(message.chat.id);
    void this.runner.run(chatId, async () => {
      if (decision.kind !== 'forward') {
        await this.pipeline.admit(decision, receivedAt);
        return;
      }
      // After a refusal, the chat's later messages wait too: they come again after it, in order.
      if (!this.refusedChats.has(chatId) && (await this.pipeline.admit(decision, receivedAt)) !== 'refused') return;
      this.refusedChats.add(chatId);
      this.takenUpdateIds.delete(updateId);
      this.firstRefusedUpdateId = Math.min(updateId, this.firstRefusedUpdateId ?? updateId);
    });
  }

  /** Deletes a placeholder nobody will answer in. Best effort: a failure is only logged. */
  private async withdraw(chatId: string, placeholderId: string): Promise<void> {
    try {
      await this.options.bot.api.deleteMessage(Number(chatId), Number(placeholderId));
    } catch (error) {
      this.options.deps.logger.warn({ chatId, err: describeError(toChannelError(error)) }, 'Telegram placeholder not withdrawn');
    }
  }

  /** Posts `text` unless the chat is rate limited; resolves with its id, or `undefined` when not sent. */
  private async sendIfOpen(chatId: string, text: string, replyToMessageId?: string): Promise<string | undefined> {
    const { gate, pacer, bot, deps } = this.options;
    if (!gate.isOpen(chatId)) return undefined;
    try {
      return await pacer.send(chatId, () => sendTelegramText(bot.api, Number(chatId), text, replyToMessageId));
    } catch (error) {
      const channelError = toChannelError(error);
      if (channelError.retryAfterMs !== undefined) gate.block(chatId, channelError.retryAfterMs);
      deps.logger.warn({ chatId, err: describeError(channelError) }, 'Telegram acknowledgement not sent');
      return undefined;
    }
  }
}
