import type { Bot } from 'grammy';
import type { Message, User } from 'grammy/types';
import { classifyText } from '../../src/channel/commands.js';
import { isDuplicateDelivery } from '../../src/channel/journaled-intake.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelDeps, ChannelStatus, ChatBinder, ChatBindRequest, InboundMessage, InboundReservation } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import { settledWithin, sleep } from '../../src/time.js';
import { normalizeCommand, parseStartCommand } from './commands.js';
import { sendTelegramText } from './egress.js';
import { notRunningReason, toChannelError } from './errors.js';
import { isPrivateChatType, topicIdFor } from './ids.js';
import { telegramInboundFiles } from './inbound-files.js';
import { telegramMessageSchema } from './schemas.js';

/** Why a start's getMe was aborted: its deadline passed, or the channel was stopped meanwhile. */
const START_TIMED_OUT = 'start timed out';
const START_ABANDONED = 'start abandoned';

/** Everything this adapter says to users by itself (reference §5.3, §6.2). */
export const TELEGRAM_REPLIES = {
  working: 'Working on it...',
  welcome: 'Welcome to DeerFlow! Send me a message to start a conversation.\nType /help for available commands.',
} as const;

/** What to do with one incoming message. */
export type MessageDecision =
  | { action: 'ignore'; reason: 'no-sender' | 'bot-sender' | 'empty' | 'other-bot' | 'not-allowed' }
  | { action: 'welcome' }
  | { action: 'bind'; request: ChatBindRequest }
  | { action: 'forward'; message: Omit<InboundMessage, 'replyTo' | 'receivedAt'> };

export interface DecideContext {
  botUsername: string;
  /** Empty allows everyone. */
  allowedUsers: ReadonlySet<number>;
  commandNames: ReadonlySet<string>;
  /** `/start <code>` binds the sender (reference §5.3); false when binding is not configured. */
  canBind: boolean;
}

/**
 * Normalizes a Telegram message (pure). Text is `text`, else `caption`, else `''`; a photo or
 * document becomes `files` (see `telegramInboundFiles`), so a file without a caption is still
 * chat. Ignores bots (ourselves included), messages with neither text nor files, commands
 * addressed to another bot, and senders outside `allowedUsers`; `/start` becomes a welcome; the
 * rest is forwarded as chat or command.
 */
export function decideMessage(message: Message, context: DecideContext): MessageDecision {
  const from = message.from;
  if (from === undefined) return { action: 'ignore', reason: 'no-sender' };
  if (from.is_bot) return { action: 'ignore', reason: 'bot-sender' };
  const raw = message.text ?? message.caption ?? '';
  const files = telegramInboundFiles(message);
  if (raw.length === 0 && files.length === 0) return { action: 'ignore', reason: 'empty' };
  const text = normalizeCommand(raw, context.botUsername);
  if (text === undefined) return { action: 'ignore', reason: 'other-bot' };
  // Before the allow-list (reference §8.1 step 5): someone not yet listed can still bind.
  // The deep link sends exactly `/start <code>`; words typed after the code are ignored, as for /connect.
  const code = parseStartCommand(text)?.split(/\s+/)[0];
  if (code && context.canBind) return { action: 'bind', request: bindRequestOf(message, from, code) };
  const isAllowed = context.allowedUsers.size === 0 || context.allowedUsers.has(from.id);
  if (!isAllowed) return { action: 'ignore', reason: 'not-allowed' };
  if (parseStartCommand(text) !== undefined) return { action: 'welcome' };
  const chatId = String(message.chat.id);
  return {
    action: 'forward',
    message: {
      channel: 'telegram',
      chatId,
      topicId: topicIdFor({
        chatType: message.chat.type,
        messageId: message.message_id,
        replyToMessageId: message.reply_to_message?.message_id,
      }),
      userId: String(from.id),
      senderIsAllowlisted: context.allowedUsers.size > 0,
      // Reference §1.5: Telegram dedupes within the chat.
      workspaceId: chatId,
      messageId: String(message.message_id),
      text,
      kind: classifyText(text, context.commandNames),
      isPrivateChat: isPrivateChatType(message.chat.type),
      ...(files.length === 0 ? {} : { files }),
    },
  };
}

/** Reference §8.1: Telegram binds per user per chat; the name is the full name, else the username. */
function bindRequestOf(message: Message, from: User, code: string): ChatBindRequest {
  const fullName = [from.first_name, from.last_name].filter(Boolean).join(' ');
  return {
    identity: { externalAccountId: String(from.id), workspaceId: String(message.chat.id) },
    code,
    accountName: fullName || from.username || String(from.id),
    ...('title' in message.chat && message.chat.title ? { workspaceName: message.chat.title } : {}),
    metadata: { chat_id: message.chat.id, chat_type: message.chat.type, telegram_username: from.username ?? null },
  };
}

export interface TelegramIngressOptions {
  bot: Bot;
  deps: ChannelDeps;
  /** Shared with egress: no placeholder goes to a chat that is rate limited. */
  gate: RateGate;
  allowedUsers: readonly number[];
  pollingTimeoutSeconds: number;
  /** How long `stop()` lets acknowledgements in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
  /** How long `start()` waits for Telegram to answer getMe (grammY retries network errors); default 30000 ms. */
  startTimeoutMs?: number;
}

const REFUSAL_WARN_INTERVAL_MS = 1000;
/** How long polling waits before asking again for updates the intake refused. */
const REFUSED_RETRY_MS = 1000;
/** Far more than one getUpdates batch (100). */
const TAKEN_UPDATES_KEPT = 1000;

/**
 * Long polling and acknowledgements. grammY hands updates over one at a time and waits for each
 * handler before polling again, so handlers only queue work: each chat's acknowledgements run
 * in order on their own promise chain while other chats and polling go on.
 */
export class TelegramIngress {
  private state: ChannelStatus = { running: false, reason: 'not started' };
  private polling: Promise<void> | undefined;
  private startAbort: AbortController | undefined;
  private isStopping = false;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly allowedUsers: ReadonlySet<number>;
  private readonly commandNames: ReadonlySet<string>;
  private refusedSinceWarn = 0;
  /** The first update the intake refused since the last poll: the next poll asks from it again. */
  private firstRefusedUpdateId: number | undefined;
  /** Updates taken (recently), so those fetched again after a refusal are not taken twice. */
  private readonly takenUpdateIds = new Set<number>();
  /** Chats with a refused update since the last poll. */
  private readonly refusedChats = new Set<string>();
  private lastRefusalWarnAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: TelegramIngressOptions) {
    this.allowedUsers = new Set(options.allowedUsers);
    this.commandNames = new Set(options.deps.commands.map((command) => command.name));
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
      await Promise.allSettled([...this.inFlight]);
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
    while (this.inFlight.size > 0 && remaining() > 0) {
      await settledWithin(Promise.allSettled([...this.inFlight]), remaining());
    }
    if (this.inFlight.size > 0) {
      this.options.deps.logger.warn({ pending: this.inFlight.size }, 'acknowledgements still running after stop timeout');
    }
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

  private receive(message: Message, updateId: number): void {
    // Fetched again after a refusal of an earlier update: what was taken then is not taken twice.
    if (this.takenUpdateIds.has(updateId)) return;
    this.takenUpdateIds.add(updateId);
    if (this.takenUpdateIds.size > TAKEN_UPDATES_KEPT) this.takenUpdateIds.delete(this.takenUpdateIds.values().next().value as number);
    const { deps } = this.options;
    const receivedAt = deps.now();
    const decision = decideMessage(message, {
      botUsername: this.options.bot.botInfo.username,
      allowedUsers: this.allowedUsers,
      commandNames: this.commandNames,
      canBind: deps.binder !== undefined,
    });
    const chatId = String(message.chat.id);
    if (decision.action === 'ignore') {
      const level = decision.reason === 'not-allowed' ? 'info' : 'debug';
      deps.logger[level]({ chatId, userId: message.from?.id, reason: decision.reason }, 'Telegram message ignored');
      return;
    }
    if (decision.action === 'bind') {
      const binder = deps.binder as ChatBinder;
      // The code stays out of logs: only the outcome's reply is sent, and it never contains it.
      this.enqueue(chatId, async () => {
        const text = await binder.bind('telegram', decision.request);
        await this.sendIfOpen(chatId, text, String(message.message_id));
      });
      return;
    }
    if (decision.action === 'welcome') {
      this.enqueue(chatId, () => this.sendIfOpen(chatId, TELEGRAM_REPLIES.welcome).then(() => undefined));
      return;
    }
    this.enqueue(chatId, async () => {
      // After a refusal, the chat's later messages wait too: they come again after it, in order.
      if (!this.refusedChats.has(chatId) && (await this.acknowledge(decision.message, receivedAt))) return;
      this.refusedChats.add(chatId);
      this.takenUpdateIds.delete(updateId);
      this.firstRefusedUpdateId = Math.min(updateId, this.firstRefusedUpdateId ?? updateId);
    });
  }

  /**
   * Reserve, then the placeholder (chat only), then commit: a full intake sends nothing. Resolves
   * false when the intake refused the message, which is then left for Telegram to send again.
   */
  private async acknowledge(message: Omit<InboundMessage, 'replyTo' | 'receivedAt'>, receivedAt: number): Promise<boolean> {
    let reservation: InboundReservation;
    try {
      reservation = await this.options.deps.intake.reserve();
    } catch (error) {
      this.warnRefused(error);
      return false;
    }
    let placeholderId: string | undefined;
    try {
      const messageId = message.messageId;
      placeholderId = message.kind === 'chat' ? await this.sendIfOpen(message.chatId, TELEGRAM_REPLIES.working, messageId) : undefined;
      await reservation.commit({
        ...message,
        receivedAt,
        replyTo: placeholderId === undefined ? { messageId } : { messageId, placeholderId },
      });
      return true;
    } catch (error) {
      reservation.release();
      if (placeholderId !== undefined) await this.withdraw(message.chatId, placeholderId);
      if (isDuplicateDelivery(error)) {
        // Telegram sent it again after a crash, but it had been accepted: its turn answers in the first placeholder.
        this.options.deps.logger.info({ chatId: message.chatId }, 'Telegram message delivered again; already accepted');
        return true;
      }
      // The queue could not take it (closing, or Redis unreachable): Telegram sends it again.
      this.options.deps.logger.warn({ chatId: message.chatId, err: describeError(error) }, 'inbound commit failed; left for Telegram to send again');
      return false;
    }
  }

  /** Deletes a placeholder nobody will answer in. Best effort: a failure is only logged. */
  private async withdraw(chatId: string, placeholderId: string): Promise<void> {
    try {
      await this.options.bot.api.deleteMessage(Number(chatId), Number(placeholderId));
    } catch (error) {
      this.options.deps.logger.warn({ chatId, err: describeError(toChannelError(error)) }, 'Telegram placeholder of a duplicate not deleted');
    }
  }

  /** Posts `text` unless the chat is rate limited; resolves with its id, or `undefined` when not sent. */
  private async sendIfOpen(chatId: string, text: string, replyToMessageId?: string): Promise<string | undefined> {
    const { gate, bot, deps } = this.options;
    if (!gate.isOpen(chatId)) return undefined;
    try {
      return await sendTelegramText(bot.api, Number(chatId), text, replyToMessageId);
    } catch (error) {
      const channelError = toChannelError(error);
      if (channelError.retryAfterMs !== undefined) gate.block(chatId, channelError.retryAfterMs);
      deps.logger.warn({ chatId, err: describeError(channelError) }, 'Telegram acknowledgement not sent');
      return undefined;
    }
  }

  private warnRefused(error: unknown): void {
    const { logger, now } = this.options.deps;
    this.refusedSinceWarn += 1;
    if (now() - this.lastRefusalWarnAt < REFUSAL_WARN_INTERVAL_MS) return;
    logger.warn({ refused: this.refusedSinceWarn, err: describeError(error) }, 'inbound intake refused Telegram messages; Telegram keeps them until there is room');
    this.lastRefusalWarnAt = now();
    this.refusedSinceWarn = 0;
  }

  private enqueue(chatId: string, task: () => Promise<void>): void {
    const { logger } = this.options.deps;
    const next = (this.chains.get(chatId) ?? Promise.resolve()).then(task).catch((error: unknown) => {
      logger.error({ chatId, err: describeError(error) }, 'Telegram acknowledgement failed');
    });
    this.chains.set(chatId, next);
    this.inFlight.add(next);
    next.finally(() => {
      this.inFlight.delete(next);
      if (this.chains.get(chatId) === next) this.chains.delete(chatId);
    });
  }
}

