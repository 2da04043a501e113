import type { WsFrame } from '@wecom/aibot-node-sdk';
import { admissionRules } from '../../src/channel/ingress/decision.js';
import { type IngressAdapter, IngressPipeline } from '../../src/channel/ingress/pipeline.js';
import { IngressRunner } from '../../src/channel/ingress/runner.js';
import { logMalformedEvent } from '../../src/channel/malformed-event.js';
import type { ChannelDeps, ChannelStatus, ReplyTarget } from '../../src/channel/types.js';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { WeComConnection } from './connection.js';
import { type DecideContext, decideMessage, REQ_ID } from './decide.js';
import { parseCallback } from './parse.js';
import { callbackBodySchema } from './schemas.js';

export interface WeComIngressOptions {
  connection: WeComConnection;
  allowedUsers: readonly string[];
  /** The acknowledgement text (`working_message`). */
  workingMessage: string;
  deps: ChannelDeps;
  logger: Logger;
  /** How long `stop()` lets admissions in flight finish; default 4000 ms. */
  stopTimeoutMs?: number;
}

/**
 * The long connection's side of the pipeline: each `aibot_msg_callback` is read, decided
 * (`decide.ts`) and admitted, one chat's in order. The acknowledgement opens the answer's stream
 * (`aibot_respond_msg` with `finish: false`); its stream id is the placeholder the reply
 * updates. WeCom has no per-message ack to withhold, so a refusal is told. Never logs message text.
 */
export class WeComIngress {
  private readonly context: DecideContext;
  private readonly pipeline: IngressPipeline;
  private readonly runner: IngressRunner;
  private isRunning = false;
  private notRunningReason = 'not started';

  constructor(private readonly options: WeComIngressOptions) {
    this.context = admissionRules(options.deps, options.allowedUsers);
    this.pipeline = new IngressPipeline(this.adapter(), options.deps, options.logger);
    this.runner = new IngressRunner(options.logger);
  }

  async start(): Promise<void> {
    if (this.isRunning) return;
    try {
      await this.options.connection.start();
    } catch (error) {
      this.notRunningReason = describeError(error).message;
      throw error;
    }
    this.isRunning = true;
  }

  async stop(): Promise<void> {
    this.isRunning = false;
    this.notRunningReason = 'stopped';
    this.options.connection.stop();
    await this.runner.stop(this.options.stopTimeoutMs ?? 4000);
  }

  /** WeCom closed this connection for a newer one of the same bot (`disconnected_event`): the SDK does not reconnect. */
  replaced(): void {
    this.isRunning = false;
    this.notRunningReason = 'replaced by a newer connection of the same bot';
  }

  status(): ChannelStatus {
    return this.isRunning ? { running: true } : { running: false, reason: this.notRunningReason };
  }

  /** Reads one callback frame; never rejects. */
  receive(frame: WsFrame): void {
    const receivedAt = this.options.deps.now();
    const checked = callbackBodySchema.safeParse(frame.body);
    if (!checked.success) {
      logMalformedEvent(this.options.logger, 'wecom', 'aibot_msg_callback', checked.error);
      return;
    }
    const message = parseCallback(checked.data);
    if (message === undefined) {
      this.options.logger.debug({ msgtype: checked.data.msgtype }, 'WeCom message without usable content; dropped');
      return;
    }
    const decision = decideMessage(message, frame.headers.req_id, this.context);
    void this.runner.run(message.chatId, () => this.pipeline.admit(decision, receivedAt));
  }

  private adapter(): IngressAdapter {
    return {
      platform: 'wecom',
      say: (target, text) => this.say(target, text),
      acknowledge: async (message) => {
        const reqId = message.platformData?.[REQ_ID];
        if (typeof reqId !== 'string') return undefined;
        const { connection, workingMessage, logger } = this.options;
        const streamId = connection.newStreamId();
        try {
          await connection.replyStream({ headers: { req_id: reqId } }, streamId, workingMessage, false);
          return streamId;
        } catch (error) {
          logger.warn({ err: describeError(error) }, 'WeCom acknowledgement not delivered');
          return undefined;
        }
      },
      refusal: 'tell',
    };
  }

  /** A short answer: a finished stream answering the message, else a markdown message into the chat. */
  private async say(target: ReplyTarget, text: string): Promise<void> {
    const { connection } = this.options;
    const reqId = target.platformData?.[REQ_ID];
    if (typeof reqId === 'string') {
      await connection.replyStream({ headers: { req_id: reqId } }, connection.newStreamId(), text, true);
      return;
    }
    await connection.sendMarkdown(target.chatId, text);
  }
}
