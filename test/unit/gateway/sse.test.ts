import { EventEmitter } from 'node:events';
import type { FastifyReply } from 'fastify';
import { describe, expect, it } from 'vitest';
import { clientGoneSignal, formatSseFrame, openSseStream } from '../../../src/gateway/sse.js';

describe('formatSseFrame', () => {
  it.each([
    [{ event: 'values', data: { a: 1 } }, 'event: values\ndata: {"a":1}\n\n'],
    [{ event: 'messages', data: ['line\nbreak', {}] }, 'event: messages\ndata: ["line\\nbreak",{}]\n\n'],
    [{ event: 'end', data: undefined }, 'event: end\ndata: null\n\n'],
    [{ event: 'bad\ndata: forged', data: 1 }, 'event: baddata: forged\ndata: 1\n\n'],
  ])('%j', (part, frame) => {
    expect(formatSseFrame(part)).toBe(frame);
  });
});

/** Just enough of a ServerResponse: `write` reports a full buffer until the test drains it. */
class FakeResponse extends EventEmitter {
  readonly chunks: string[] = [];
  head: Record<string, unknown> | undefined;
  isFull = false;
  destroyed = false;
  writableEnded = false;
  writableFinished = false;
  writeHead(_status: number, headers: Record<string, unknown>) {
    this.head = headers;
  }
  flushHeaders() {}
  write(chunk: string) {
    this.chunks.push(chunk);
    return !this.isFull;
  }
  end() {
    this.writableEnded = true;
    this.writableFinished = true;
    this.emit('close');
  }
}

function fakeReply(res: FakeResponse): FastifyReply {
  return { raw: res, hijack() {}, getHeaders: () => ({ 'x-request-id': 'rid', skipped: undefined }) } as unknown as FastifyReply;
}

describe('openSseStream', () => {
  it('sends the SSE head with the reply headers and the given ones', () => {
    const res = new FakeResponse();
    openSseStream(fakeReply(res), { 'content-location': '/threads/t/runs/r' });
    expect(res.head).toEqual({
      'x-request-id': 'rid',
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'content-location': '/threads/t/runs/r',
    });
  });

  it('waits for drain while the socket buffer is full', async () => {
    const res = new FakeResponse();
    const sse = openSseStream(fakeReply(res));
    res.isFull = true;
    let written = false;
    const pending = sse.write({ event: 'a', data: 1 }).then((ok) => {
      written = ok;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toBe(false);
    res.isFull = false;
    res.emit('drain');
    await pending;
    expect(written).toBe(true);
  });

  it('reports a closed client instead of waiting forever, and drops later writes', async () => {
    const res = new FakeResponse();
    const sse = openSseStream(fakeReply(res));
    res.isFull = true;
    const pending = sse.write({ event: 'a', data: 1 });
    res.destroyed = true;
    res.emit('close');
    expect(await pending).toBe(false);
    expect(await sse.write({ event: 'b', data: 2 })).toBe(false);
    expect(res.chunks).toHaveLength(1);
    expect(sse.isClosed).toBe(true);
  });
});

describe('clientGoneSignal', () => {
  it('aborts when the response closes unfinished, not after a normal end', () => {
    const dropped = new FakeResponse();
    const droppedSignal = clientGoneSignal(fakeReply(dropped));
    dropped.emit('close');
    expect(droppedSignal.aborted).toBe(true);

    const finished = new FakeResponse();
    const finishedSignal = clientGoneSignal(fakeReply(finished));
    finished.end();
    expect(finishedSignal.aborted).toBe(false);
  });
});
