import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { StreamPart } from '../runtime/types.js';

/**
 * One server-sent event: `event: <name>\ndata: <json>\n\n`. JSON never holds a raw newline, so the
 * data is always one line; line breaks in the name are dropped so a part cannot forge a frame.
 */
export function formatSseFrame(part: StreamPart): string {
  const event = part.event.replace(/[\r\n]/g, '');
  return `event: ${event}\ndata: ${JSON.stringify(part.data ?? null)}\n\n`;
}

export interface SseWriter {
  /** Writes one frame; waits while the socket buffer is full. Resolves false once the client is gone. */
  write(part: StreamPart): Promise<boolean>;
  /** Ends the response; later writes are dropped. */
  end(): void;
  readonly isClosed: boolean;
}

/**
 * Takes the response over from Fastify (`reply.hijack()`) and sends the SSE head: status 200,
 * `content-type: text/event-stream`, no caching or proxy buffering, plus headers already set on
 * the reply and `headers`. Call it only once nothing can fail with a JSON error any more.
 */
export function openSseStream(reply: FastifyReply, headers: Record<string, string> = {}): SseWriter {
  reply.hijack();
  const res: ServerResponse = reply.raw;
  const replyHeaders = Object.entries(reply.getHeaders()).filter(([, value]) => value !== undefined);
  res.writeHead(200, {
    ...(Object.fromEntries(replyHeaders) as OutgoingHttpHeaders),
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    // nginx and similar proxies buffer responses unless told otherwise.
    'x-accel-buffering': 'no',
    ...headers,
  });
  res.flushHeaders();
  const isClosed = () => res.destroyed || res.writableEnded;

  return {
    async write(part) {
      if (isClosed()) return false;
      if (!res.write(formatSseFrame(part))) await drainedOrClosed(res);
      return !isClosed();
    },
    end() {
      if (!isClosed()) res.end();
    },
    get isClosed() {
      return isClosed();
    },
  };
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * A signal that aborts when the client goes away before the response was fully sent: the
 * response closes while not yet finished. A normal end never aborts it.
 */
export function clientGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const res = reply.raw;
  const onClose = () => {
    if (!res.writableFinished) controller.abort(new Error('client disconnected'));
  };
  if (res.destroyed) onClose();
  else res.once('close', onClose);
  return controller.signal;
}
