import type { DWClientDownStream } from 'dingtalk-stream';
import { admissionRules, type PendingInbound } from '../../src/channel/ingress/decision.js';
import { type IngressAdapter, IngressPipeline } from '../../src/channel/ingress/pipeline.js';
import { IngressRunner } from '../../src/channel/ingress/runner.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { ChannelDeps, ChannelStatus, ReplyTarget } from '../../src/channel/types.js';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { CardApi } from './card.js';
import { type DecideContext, decideRobotMessage, QUOTED_MESSAGE_ID } from './decide.js';
import { WORKING_TEXT } from './limits.js';
import { parseRobotMessage } from './parse.js';
import { escapeDingTalkText } from './render.js';
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
  /** How long `stop()` lets admissions in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
}

/**
 * Stream-mode transport: each robot message callback is read, decided (`decide.ts`) and admitted
 * through core's pipeline, one chat's in order; the callback is acked once the message is settled.
 * One the intake refused is not acked, so DingTalk redelivers it (about 60 s later). Never logs
 * message text.
 */
export class DingTalkIngress {
  private readonly connection: StreamConnection;
  private readonly context: DecideContext;
  private readonly pipeline: IngressPipeline;
  private readonly runner: IngressRunner;
  private isRunning = false;
  /** Why it is not running, secret-free: the start failure, or `stopped`. */
  private notRunningReason = 'not started';

  constructor(private readonly options: DingTalkIngressOptions) {
    this.context = admissionRules(options.deps, options.allowedUsers);
    this.pipeline = new IngressPipeline(this.adapter(), options.deps, options.logger);
    this.runner = new IngressRunner(options.logger);
    this.connection = new StreamConnection({
      apiUrl: options.apiUrl,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      logger: options.logger,
      onRobotMessage: (frame) => void this.receive(frame),
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
    await this.runner.stop(this.options.stopTimeoutMs ?? 4000);
  }

  status(): ChannelStatus {
    return this.isRunning ? { running: true } : { running: false, reason: this.notRunningReason };
  }

  /** DingTalk's side of the pipeline: answers through the robot, the acknowledgement as a card or a text. */
  private adapter(): IngressAdapter {
    const { sender } = this.options;
    return {
      platform: 'dingtalk',
      say: (target, text) => sender.text(target, text),
      acknowledge: (message) => this.acknowledge({ chatId: message.chatId, isPrivateChat: message.isPrivateChat, replyTo: { messageId: message.messageId as string } }),
      place: (message) => this.placeInConversation(message),
      refusal: 'redeliver',
    };
  }

  /**
   * A group message quoting another joins that one's conversation: the one recorded for it, else
   * the one it started. Recorded in turn, so quoting this message continues the same. Once the
   * message holds its place in the intake: a refused one records nothing. A store that cannot be
   * read leaves the message in its own conversation.
   */
  private async placeInConversation(message: PendingInbound): Promise<PendingInbound> {
    const quoted = message.platformData?.[QUOTED_MESSAGE_ID];
    if (message.isPrivateChat || typeof quoted !== 'string') return message;
    const { state } = this.options.deps;
    try {
      const recorded = await state.get(conversationKey(message.chatId, quoted));
      const topicId = typeof recorded === 'string' ? recorded : quoted;
      await state.set(conversationKey(message.chatId, message.messageId as string), topicId);
      return { ...message, topicId };
    } catch (error) {
      this.options.logger.warn({ err: describeError(error) }, 'DingTalk quoted conversation not looked up; the message starts its own');
      return message;
    }
  }

  private async receive(frame: DWClientDownStream): Promise<void> {
    const receivedAt = this.options.deps.now();
    const ack = () => this.connection.ack(frame.headers.messageId);
    const message = this.read(frame.data);
    if (message === undefined) return ack();
    if (message.sessionWebhook) this.options.sessions.remember(message.messageId, message.sessionWebhook);
    const decision = decideRobotMessage(message, this.context);
    const outcome = await this.runner.run(message.chatId, () => this.pipeline.admit(decision, receivedAt));
    // Refused (or failed): left unacknowledged, DingTalk sends it again.
    if (outcome !== undefined && outcome !== 'refused') ack();
  }

  /** The callback's robot message, or undefined (logged) when it is unreadable or asks nothing. */
  private read(data: string): ReturnType<typeof parseRobotMessage> {
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      this.options.logger.warn('DingTalk robot message with unreadable data; dropped');
      return undefined;
    }
    const checked = robotMessageSchema.safeParse(json);
    if (!checked.success) {
      logMalformedEvent(this.options.logger, 'dingtalk', 'robot_message', checked.error);
      return undefined;
    }
    const message = parseRobotMessage(checked.data);
    if (message === undefined) this.options.logger.debug({ msgtype: checked.data.msgtype }, 'DingTalk robot message without usable content; dropped');
    return message;
  }

  /** The "working" acknowledgement: an AI card (its id is the placeholder) or a text. Never rejects. */
  private async acknowledge(target: ReplyTarget): Promise<string | undefined> {
    const { cards, sender, logger } = this.options;
    if (cards) {
      try {
        // The card shows markdown; the working text is ours, not Markdown, and shows as written.
        return await cards.create(target, escapeDingTalkText(WORKING_TEXT));
      } catch (error) {
        logger.warn({ err: describeError(error) }, 'DingTalk card not created; acknowledging with text');
      }
    }
    await sender.text(target, WORKING_TEXT).catch((error: unknown) => {
      logger.warn({ err: describeError(error) }, 'DingTalk acknowledgement not delivered');
    });
    return undefined;
  }
}

/** The channel-state key of the conversation a group message belongs to. */
function conversationKey(conversationId: string, messageId: string): string {
  return `conversation:${conversationId}:${messageId}`;
}
