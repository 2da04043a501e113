import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type StubRuntime } from '../../stub-runtime.js';

let app: FastifyInstance;
let runtime: StubRuntime;
beforeEach(async () => {
  ({ app, runtime } = await buildTestApp());
});
afterEach(async () => {
  await app.close();
});

describe('POST /api/threads', () => {
  it('creates a thread with a server-chosen id, with or without a body', async () => {
    for (const request of [{ payload: {} }, {}]) {
      const response = await app.inject({ method: 'POST', url: '/api/threads', ...request });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ status: 'idle', values: null, metadata: {} });
      expect(runtime.threads.has(response.json().thread_id)).toBe(true);
    }
  });

  it('returns the existing thread with if_exists do_nothing, 409 with raise, and ignores unknown keys', async () => {
    const threadId = randomUUID();
    const create = (ifExists: string) =>
      app.inject({
        method: 'POST',
        url: '/api/threads',
        payload: { thread_id: threadId, if_exists: ifExists, metadata: { a: 1 }, supersteps: null, graph_id: 'x' },
      });
    const first = await create('raise');
    expect(first.json()).toMatchObject({ thread_id: threadId, metadata: { a: 1 } });
    const again = await create('do_nothing');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    const conflict = await create('raise');
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toEqual({ code: 'CONFLICT', message: 'Thread already exists.' });
  });

  it.each([
    [{ thread_id: 'not-a-uuid' }, 'body.thread_id: must be a UUID'],
    [{ if_exists: 'replace' }, 'body.if_exists: '],
    [{ metadata: 'x' }, 'body.metadata: '],
  ])('rejects %j with 400', async (payload, message) => {
    const response = await app.inject({ method: 'POST', url: '/api/threads', payload });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('BAD_REQUEST');
    expect(response.json().message).toContain(message);
  });
});

describe('GET /api/threads/:thread_id', () => {
  it('returns the thread', async () => {
    const thread = await runtime.createThread({ metadata: { chat: 'x' } });
    const response = await app.inject({ method: 'GET', url: `/api/threads/${thread.thread_id}` });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(thread);
  });

  it('answers 404 for an unknown thread and 400 for a non-UUID id', async () => {
    const unknown = await app.inject({ method: 'GET', url: `/api/threads/${randomUUID()}` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ code: 'NOT_FOUND', message: 'Thread not found' });
    const bad = await app.inject({ method: 'GET', url: '/api/threads/123' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ code: 'BAD_REQUEST', message: 'params.thread_id: must be a UUID' });
  });
});
