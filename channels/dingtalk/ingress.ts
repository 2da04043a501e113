import type { DWClientDownStream } from 'dingtalk-stream';
import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { ChannelDeps, ChannelStatus, InboundMessage, ReplyTarget } from '../../src/channel/types.js';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { CardApi } from './card.js';
import { WORKING_TEXT } from './limits.js';
import { type ParsedRobotMessage, parseRobotMessage, stripLeadingMentions } from './parse.js';
import { robotMessageSchema } from './schemas.js';
import type { RobotSender, SessionWebhooks } from './sender.js';
import { StreamConnection } from './stream.js';

export interface DingTalkIngressOptions {
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  allowedUsers: readonly string[];
  deps: ChannelDeps;
  logger: Logger;
  sender: RobotSender;
  sessions: SessionWebhooks;
  /** Present in card mode: the acknowledgement is a card the reply streams into. */
  cards?: CardApi;
}

/**
 * Stream-mode ingress: robot messages are parsed, `/connect` is handled first, then the
 * allow-list; a message is deduplicated by its `msgId`, admitted (reserve, acknowledgement,
 * commit) and only then is the callback acked. A message the intake refused is not acked, so
 * DingTalk redelivers it later (about 60 s). Never logs message text.
 */
export class DingTalkIngress {
  private readonly connection: StreamConnection;
  private readonly commandNames: ReadonlySet<string>;
  private readonly inFlight = new Set<Promise<void>>();
  private isRunning = false;
  /** Why it is not running, secret-free: the start failure, or `stopped`. */
  private notRunningReason = 'not started';

  constructor(private readonly options: DingTalkIngressOptions) {
    this.commandNames = new Set(options.deps.commands.map((c) => c.name));
    this.connection = new StreamConnection({
      apiUrl: options.apiUrl,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      logger: options.logger,
      onRobotMessage: (frame) => this.track(this.handle(frame)),
    });
  }

  async start(): Promise<void> {
    if (this.isRunning) return;
    try {
      await this.connection.start();
    } catch (error) {
      this.notRunningReason = describeError(error).message;
      throw error;
    }
    this.isRunning = true;
  }

  async stop(): Promise<void> {
    this.isRunning = false;
    this.notRunningReason = 'stopped';
    this.connection.stop();
    await Promise.allSettled([...this.inFlight]);
  }

  status(): ChannelStatus {
    return this.isRunning ? { running: true } : { running: false, reason: this.notRunningReason };
  }

  private track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => {
      this.options.logger.error({ err: describeError(error) }, 'DingTalk robot message handling failed');
    });
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
  }

  private async handle(frame: DWClientDownStream): Promise<void> {
    const ack = () => this.connection.ack(frame.headers.messageId);
    let data: unknown;
    try {
      data = JSON.parse(frame.data);
    } catch {
      this.options.logger.warn('DingTalk robot message with unreadable data; dropped');
      return ack();
    }
    const checked = robotMessageSchema.safeParse(data);
    if (!checked.success) {
      logMalformedEvent(this.options.logger, 'dingtalk', 'robot_message', checked.error);
      return ack();
    }
    const raw = checked.data;
    const message = parseRobotMessage(raw);
    if (message === undefined) {
      this.options.logger.debug({ msgtype: raw.msgtype }, 'DingTalk robot message without usable content; dropped');
      return ack();
    }
    if (message.sessionWebhook) this.options.sessions.remember(message.messageId, message.sessionWebhook);
    const target: ReplyTarget = { chatId: message.chatId, isPrivateChat: message.isPrivateChat, replyTo: { messageId: message.messageId } };
    if (await this.bindIfConnect(message, target)) return ack();
    const { allowedUsers } = this.options;
    if (allowedUsers.length > 0 && !allowedUsers.includes(message.userId)) {
      this.options.logger.info({ chatId: message.chatId }, 'DingTalk sender not in allowed_users; dropped');
      return ack();
    }
    if (await this.admit(message, target, allowedUsers.length > 0)) ack();
  }

  /** `/connect <code>` before the allow-list (reference §5.3); resolves true when it was one. */
  private async bindIfConnect(message: ParsedRobotMessage, target: ReplyTarget): Promise<boolean> {
    const binder = this.options.deps.binder;
    const code = binder === undefined ? undefined : parseConnectCommand(message.text);
    if (binder === undefined || code === undefined) return false;
    const answer = await binder.bind('dingtalk', {
      identity: { externalAccountId: message.userId, ...(message.isPrivateChat ? {} : { workspaceId: message.conversationId }) },
      code,
      ...(message.userName === undefined ? {} : { accountName: message.userName }),
      metadata: { conversation_type: message.isPrivateChat ? '1' : '2', conversation_id: message.conversationId },
    });
    await this.options.sender.text(target, answer).catch((error: unknown) => {
      this.options.logger.warn({ err: describeError(error) }, 'DingTalk bind answer not delivered');
    });
    return true;
  }

  /** Dedupe, reserve, acknowledge, commit; resolves true when the callback may be acked. */
  private async admit(message: ParsedRobotMessage, target: ReplyTarget, isAllowListed: boolean): Promise<boolean> {
    const { deps, logger } = this.options;
    const claim = await deps.deliveries.begin(message.messageId, 'robot_message');
    if (claim.kind !== 'new') {
      logger.info({ claim: claim.kind }, 'DingTalk redelivered a robot message; not handled again');
      return true;
    }
    let reservation: Awaited<ReturnType<ChannelDeps['intake']['reserve']>>;
    try {
      reservation = await deps.intake.reserve();
    } catch (error) {
      await deps.deliveries.fail(message.messageId);
      logger.warn({ err: describeError(error) }, 'DingTalk robot message refused by the intake; left for redelivery');
      return false;
    }
    try {
      const placeholderId = await this.acknowledge(target);
      await reservation.commit(this.inbound(message, placeholderId, isAllowListed));
    } catch (error) {
      reservation.release();
      await deps.deliveries.fail(message.messageId);
      throw error;
    }
    await deps.deliveries.finish(message.messageId, { admitted: true });
    return true;
  }

  /** The "working" acknowledgement: an AI card (its id is the placeholder) or a text. Never rejects. */
  private async acknowledge(target: ReplyTarget): Promise<string | undefined> {
    const { cards, sender, logger } = this.options;
    if (cards) {
      try {
        return await cards.create(target, WORKING_TEXT);
      } catch (error) {
        logger.warn({ err: describeError(error) }, 'DingTalk card not created; acknowledging with text');
      }
    }
    await sender.text(target, WORKING_TEXT).catch((error: unknown) => {
      logger.warn({ err: describeError(error) }, 'DingTalk acknowledgement not delivered');
    });
    return undefined;
  }

  private inbound(message: ParsedRobotMessage, placeholderId: string | undefined, isAllowListed: boolean): InboundMessage {
    // `@someone /status` is a command: the manager parses the text the classification read.
    const bare = stripLeadingMentions(message.text);
    const kind = classifyText(bare, this.commandNames);
    return {
      channel: 'dingtalk',
      chatId: message.chatId,
      userId: message.userId,
      senderIsAllowlisted: isAllowListed,
      // The conversation id scopes dedupe (reference §9); bindings use it only in groups (§6.0).
      workspaceId: message.conversationId,
      messageId: message.messageId,
      text: kind === 'command' ? bare : message.text,
      kind,
      isPrivateChat: message.isPrivateChat,
      replyTo: { messageId: message.messageId, ...(placeholderId === undefined ? {} : { placeholderId }) },
      receivedAt: this.options.deps.now(),
      ...(message.files.length === 0 ? {} : { files: message.files }),
    };
  }
}
