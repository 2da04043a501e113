import { randomUUID } from 'node:crypto';
import { type WsFrame, WSClient } from '@wecom/aibot-node-sdk';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { toChannelError } from './errors.js';

export interface WeComConnectionOptions {
  botId: string;
  botSecret: string;
  wsUrl: string;
  logger: Logger;
  /** Every `aibot_msg_callback` frame; must not throw (it is wrapped anyway). */
  onMessage(frame: WsFrame): void;
  /** WeCom closed the connection for a newer one of the same bot; the SDK does not reconnect. */
  onReplaced(): void;
  /** SDK reconnect base delay, ms (doubling to 30 s); default 1000. */
  reconnectBaseMs?: number;
}

/** A passive reply's target: the callback's `req_id`. */
export type ReplyFrame = Pick<WsFrame, 'headers'>;

/** The media types `aibot_send_msg` takes. */
export type MediaType = 'image' | 'file';

/**
 * The official SDK's `WSClient` on one long connection (it authenticates with `aibot_subscribe`,
 * sends the heartbeat and reconnects itself, here without a limit), with its console logging
 * replaced: the SDK logs frame bodies (message text) at debug, so only its warnings and errors
 * reach our log, without their arguments. Every send rejects with a `ChannelError`.
 */
export class WeComConnection {
  private readonly client: WSClient;
  private isAuthenticated = false;
  /** Between a successful `start()` and `stop()`: this process holds the connection. */
  private hasStarted = false;
  /** Why the connection is down, secret-free; `undefined` while it is up. */
  private downReason: string | undefined = 'not started';

  constructor(options: WeComConnectionOptions) {
    const logger = options.logger;
    this.client = new WSClient({
      botId: options.botId,
      secret: options.botSecret,
      wsUrl: options.wsUrl,
      reconnectInterval: options.reconnectBaseMs ?? 1000,
      maxReconnectAttempts: -1,
      // A refusal after start (a reset secret, WeCom's own trouble) is retried too, up to every 30 s.
      maxAuthFailureAttempts: -1,
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (message: string) => logger.debug({ sdk: firstWords(message) }, 'WeCom SDK warning'),
        error: (message: string) => logger.debug({ sdk: firstWords(message) }, 'WeCom SDK error'),
      },
    });
    this.client.on('message', (frame: WsFrame) => {
      try {
        options.onMessage(frame);
      } catch (error) {
        logger.error({ err: describeError(error) }, 'WeCom message handler threw');
      }
    });
    this.client.on('event.disconnected_event', () => {
      this.isAuthenticated = false;
      this.downReason = 'replaced';
      logger.warn('WeCom closed this long connection for a newer one of the same bot');
      options.onReplaced();
    });
    this.client.on('error', (error: Error) => {
      if (/^Authentication failed/.test(error.message)) logger.warn('WeCom refused the bot_id / bot_secret; retrying');
      else logger.debug({ sdk: firstWords(error.message) }, 'WeCom long connection error');
    });
    this.client.on('authenticated', () => {
      this.isAuthenticated = true;
      this.downReason = undefined;
      logger.info('WeCom long connection authenticated');
    });
    this.client.on('disconnected', (reason: string) => {
      // After a `disconnected_event` the SDK says so too; it does not reconnect then.
      if (this.downReason === 'replaced') return;
      this.isAuthenticated = false;
      this.downReason = 'disconnected';
      logger.warn({ reason: firstWords(reason) }, 'WeCom long connection closed; the SDK reconnects');
    });
  }

  /**
   * Connects and resolves once WeCom accepted the bot's credentials. Rejects with a
   * `ChannelError` (and stops) when WeCom refuses them or the socket fails before that.
   */
  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const cleanup = () => {
        this.client.off('authenticated', onAuthenticated);
        this.client.off('error', onError);
      };
      const onAuthenticated = () => {
        cleanup();
        this.hasStarted = true;
        resolve();
      };
      const onError = (error: Error) => {
        cleanup();
        this.client.disconnect();
        this.downReason = 'start failed';
        const isRefused = /Authentication failed/.test(error.message);
        reject(
          new ChannelError('wecom', isRefused ? 'CHANNEL_UNAUTHORIZED' : 'CHANNEL_UNAVAILABLE', isRefused ? 'WeCom refused the bot_id / bot_secret' : 'WeCom long connection failed', {
            status: 502,
            ...(isRefused ? { userMessage: 'WeCom refused the bot_id / bot_secret.' } : {}),
          }),
        );
      };
      this.client.on('authenticated', onAuthenticated);
      this.client.on('error', onError);
      this.client.connect();
    });
  }

  stop(): void {
    this.hasStarted = false;
    this.isAuthenticated = false;
    this.downReason = 'stopped';
    // The SDK warns (to its logger) when it is not connected; harmless.
    this.client.disconnect();
  }

  /** True from a successful `start()` until `stop()`: sends go on this connection (else through the holder). */
  isStarted(): boolean {
    return this.hasStarted;
  }

  /** Why the connection is not usable now, or `undefined` while it is authenticated. */
  notUpReason(): string | undefined {
    return this.isAuthenticated ? undefined : (this.downReason ?? 'connecting');
  }

  /** A fresh stream id: one per answer. */
  newStreamId(): string {
    return `stream-${randomUUID()}`;
  }

  /** Sends or updates stream `streamId` answering the callback `frame` (`aibot_respond_msg`); `finish` ends it. */
  async replyStream(frame: ReplyFrame, streamId: string, content: string, finish: boolean): Promise<void> {
    await this.client.replyStream(frame, streamId, content, finish).catch((error: unknown) => {
      throw toChannelError(error, 'stream reply');
    });
  }

  /** A proactive markdown message into a chat (`aibot_send_msg`): a userid or a group chatid. */
  async sendMarkdown(chatId: string, content: string): Promise<void> {
    await this.client.sendMessage(chatId, { msgtype: 'markdown', markdown: { content } }).catch((error: unknown) => {
      throw toChannelError(error, 'markdown message');
    });
  }

  /** Uploads `bytes` (512 KiB chunks, at most 100) and sends them into the chat. */
  async sendMedia(chatId: string, type: MediaType, fileName: string, bytes: Buffer): Promise<void> {
    try {
      const { media_id: mediaId } = await this.client.uploadMedia(bytes, { type, filename: fileName });
      await this.client.sendMediaMessage(chatId, type, mediaId);
    } catch (error) {
      throw toChannelError(error, `${type} upload`);
    }
  }
}

/** The SDK's log line without what follows a colon (frame bodies, reasons with ids). */
function firstWords(message: string): string {
  return message.split(':')[0]?.slice(0, 80) ?? '';
}
