import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Topic } from '../../src/channel/topic.js';
import type { JsonValue } from '../../src/channel/types.js';
import { ChannelError, describeError, type ErrorCode } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { MediaType, ReplyFrame, WeComConnection } from './connection.js';
import { toChannelError } from './errors.js';

/** The sends a reply makes, wherever the long connection is. Each rejects with a `ChannelError`. */
export interface WeComSender {
  newStreamId(): string;
  replyStream(frame: ReplyFrame, streamId: string, content: string, finish: boolean): Promise<void>;
  sendMarkdown(chatId: string, content: string): Promise<void>;
  sendMedia(chatId: string, type: MediaType, fileName: string, bytes: Buffer): Promise<void>;
}

/** The topic key requests go to; each answer goes to `answer:<request id>`. */
const REQUESTS = 'requests';

const requestSchema = z.discriminatedUnion('op', [
  z.object({ id: z.string(), op: z.literal('stream'), reqId: z.string(), streamId: z.string(), content: z.string(), finish: z.boolean() }),
  z.object({ id: z.string(), op: z.literal('markdown'), chatId: z.string(), content: z.string() }),
]);
type RelayRequest = z.infer<typeof requestSchema>;
/** A request before it has its id. */
type RelayCall = Omit<Extract<RelayRequest, { op: 'stream' }>, 'id'> | Omit<Extract<RelayRequest, { op: 'markdown' }>, 'id'>;

const answerSchema = z.union([
  z.object({ ok: z.literal(true) }),
  z.object({ ok: z.literal(false), code: z.string(), message: z.string(), retryAfterMs: z.number().optional() }),
]);

export interface RelayedSenderOptions {
  connection: WeComConnection;
  /** This platform's topic, to every process (Redis pub/sub when scaled out). */
  topic: Topic;
  logger: Logger;
  /** How long a relayed send waits for the connection's holder; default 10000 ms. */
  timeoutMs?: number;
}

/**
 * WeCom has no REST API for the AI bot: every reply is a frame on the one long connection, which
 * only the process holding the channel's ingress lease has (the adapter is `exclusiveIngress`).
 * Here a process that never started the connection hands its stream updates and markdown
 * messages to the holder over the topic and waits for its answer; the holder runs them on its
 * connection, in arrival order, and answers with the outcome (a rate limit keeps its wait). No
 * answer within `timeoutMs` (no holder, or it is reconnecting) rejects `CHANNEL_UNAVAILABLE`, and
 * the outbox sends the final later. Files are not relayed (megabytes over pub/sub): a standby
 * process refuses them. Never carries or logs secrets; message text travels only to the holder.
 */
export class RelayedSender implements WeComSender {
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly options: RelayedSenderOptions) {}

  /** Starts answering other processes' requests; called once this process holds the connection. */
  serve(): void {
    this.unsubscribe ??= this.options.topic.subscribe(REQUESTS, (event) => void this.run(event));
  }

  stopServing(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  newStreamId(): string {
    return this.options.connection.newStreamId();
  }

  replyStream(frame: ReplyFrame, streamId: string, content: string, finish: boolean): Promise<void> {
    if (this.options.connection.isStarted()) return this.options.connection.replyStream(frame, streamId, content, finish);
    return this.relay({ op: 'stream', reqId: frame.headers.req_id, streamId, content, finish });
  }

  sendMarkdown(chatId: string, content: string): Promise<void> {
    if (this.options.connection.isStarted()) return this.options.connection.sendMarkdown(chatId, content);
    return this.relay({ op: 'markdown', chatId, content });
  }

  async sendMedia(chatId: string, type: MediaType, fileName: string, bytes: Buffer): Promise<void> {
    if (!this.options.connection.isStarted()) {
      throw new ChannelError('wecom', 'CHANNEL_UNAVAILABLE', 'WeCom files are sent only by the process holding the long connection', { status: 503 });
    }
    await this.options.connection.sendMedia(chatId, type, fileName, bytes);
  }

  private relay(request: RelayCall): Promise<void> {
    const { topic, timeoutMs = 10_000 } = this.options;
    const id = randomUUID();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        stop();
        reject(new ChannelError('wecom', 'CHANNEL_UNAVAILABLE', 'no process holding the WeCom long connection answered', { status: 503 }));
      }, timeoutMs);
      const unsubscribe = topic.subscribe(`answer:${id}`, (event) => {
        const answer = answerSchema.safeParse(event);
        if (!answer.success) return;
        stop();
        if (answer.data.ok) return resolve();
        const { code, message, retryAfterMs } = answer.data;
        reject(new ChannelError('wecom', code as ErrorCode, message, { status: 502, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) }));
      });
      const stop = () => {
        clearTimeout(timer);
        unsubscribe();
      };
      topic.publish(REQUESTS, { ...request, id } as JsonValue);
    });
  }

  /** Runs another process's request on this connection and publishes the outcome. Never rejects. */
  private async run(event: JsonValue): Promise<void> {
    const { connection, topic, logger } = this.options;
    const parsed = requestSchema.safeParse(event);
    // Not ours to answer while the connection is down: the asker times out and the outbox retries.
    if (!parsed.success || connection.notUpReason() !== undefined) return;
    const request = parsed.data;
    try {
      if (request.op === 'stream') await connection.replyStream({ headers: { req_id: request.reqId } }, request.streamId, request.content, request.finish);
      else await connection.sendMarkdown(request.chatId, request.content);
      topic.publish(`answer:${request.id}`, { ok: true });
    } catch (error) {
      const failure = toChannelError(error, `relayed ${request.op}`);
      logger.debug({ err: describeError(failure) }, 'relayed WeCom send failed');
      topic.publish(`answer:${request.id}`, {
        ok: false,
        code: failure.code,
        message: failure.message,
        ...(failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs }),
      });
    }
  }
}
