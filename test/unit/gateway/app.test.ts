import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentError, AppError } from '../../../src/errors.js';
import { createLogger } from '../../../src/logger.js';
import { buildTestApp } from './stub-runtime.js';

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function setup(...args: Parameters<typeof buildTestApp>) {
  const built = await buildTestApp(...args);
  app = built.app;
  return built;
}

describe('buildApp error handling', () => {
  it('answers malformed JSON with 400 and a reason', async () => {
    const { app } = await setup();
    const response = await app.inject({
      method: 'POST',
      url: '/api/threads',
      headers: { 'content-type': 'application/json' },
      payload: '{"thread_id": ',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ code: 'BAD_REQUEST', message: 'Request body is not valid JSON.' });
  });

  it('answers an empty JSON body with 400', async () => {
    const { app } = await setup();
    const response = await app.inject({
      method: 'POST',
      url: '/api/threads',
      headers: { 'content-type': 'application/json' },
      payload: '',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('BAD_REQUEST');
  });

  it('answers an unknown route with a JSON 404', async () => {
    const { app } = await setup();
    const response = await app.inject({ method: 'GET', url: '/api/nope' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toMatch(/application\/json/);
    expect(response.json()).toEqual({ code: 'NOT_FOUND', message: 'Route not found' });
  });

  it('rejects a body over 1 MiB with 413', async () => {
    const { app } = await setup();
    const response = await app.inject({
      method: 'POST',
      url: '/api/threads',
      payload: { metadata: { blob: 'x'.repeat(1024 * 1024) } },
    });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toEqual({ code: 'BAD_REQUEST', message: 'Request body is too large.' });
  });

  it('logs requests for /health and /metrics only at debug, so probes every few seconds do not fill the log; the API at info', async () => {
    for (const level of ['info', 'debug'] as const) {
      const lines: Array<{ level: number; req?: { url?: string } }> = [];
      const logger = createLogger({ level, destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
      const { app } = await buildTestApp({ logger, metrics: { render: async () => ({ contentType: 'text/plain', body: '' }), isPublic: true } });
      for (const url of ['/health', '/%68ealth', '/metrics', '/api/models']) await app.inject({ method: 'GET', url });
      const logged = new Set(lines.flatMap((line) => (line.req?.url === undefined ? [] : [line.req.url])));
      expect([...logged].sort()).toEqual(level === 'info' ? ['/api/models'] : ['/%68ealth', '/api/models', '/health', '/metrics']);
      await app.close();
    }
  });

  it('rejects a non-JSON content type with 415', async () => {
    const { app } = await setup();
    const response = await app.inject({
      method: 'POST',
      url: '/api/threads',
      headers: { 'content-type': 'application/xml' },
      payload: '<thread/>',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json().code).toBe('BAD_REQUEST');
  });

  it('hides an unknown error behind a generic 500 and logs it with the request id, credentials masked', async () => {
    const { app, runtime, logs } = await setup();
    runtime.failure = new Error('connection to postgres://admin:hunter2@db failed');
    const response = await app.inject({ method: 'GET', url: `/api/threads/${randomUUID()}` });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ code: 'INTERNAL', message: 'Internal server error' });
    expect(response.body).not.toContain('hunter2');
    const requestId = response.headers['x-request-id'];
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const logged = logs.find((line) => line.msg === 'request failed');
    expect(logged?.reqId).toBe(requestId);
    // The log keeps what failed, never the credentials a stranger's text carried.
    expect(JSON.stringify(logged?.err)).toContain('connection to postgres://');
    expect(JSON.stringify(logged?.err)).not.toContain('hunter2');
  });

  it('hides an AppError of status 500 or more, even with a userMessage', async () => {
    const { app, runtime } = await setup();
    runtime.failure = new AgentError('MODEL_FAILED', 'upstream said: invalid api key sk-123', { userMessage: 'x' });
    const response = await app.inject({ method: 'GET', url: '/api/models' });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ code: 'INTERNAL', message: 'Internal server error' });
  });

  it('sends code and userMessage for an AppError below 500, and a generic text without userMessage', async () => {
    const { app, runtime } = await setup();
    runtime.failure = new AppError('CONFLICT', 'internal detail', { status: 409, userMessage: 'Try again later.' });
    const withText = await app.inject({ method: 'GET', url: '/api/models' });
    expect(withText.statusCode).toBe(409);
    expect(withText.json()).toEqual({ code: 'CONFLICT', message: 'Try again later.' });

    runtime.failure = new AppError('BAD_REQUEST', 'internal detail', { status: 400 });
    const withoutText = await app.inject({ method: 'GET', url: '/api/models' });
    expect(withoutText.statusCode).toBe(400);
    expect(withoutText.json()).toEqual({ code: 'BAD_REQUEST', message: 'Bad Request' });
  });

  it('gives every response a fresh request id', async () => {
    const { app } = await setup();
    const first = await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'spoofed' } });
    const second = await app.inject({ method: 'GET', url: '/health' });
    expect(first.headers['x-request-id']).not.toBe('spoofed');
    expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
  });
});

describe('channel routes', () => {
  it('mounts each channel at /api/webhooks/<name> in its own context', async () => {
    const { app } = await setup({
      channelRoutes: [
        {
          name: 'telegram',
          routes: async (instance) => {
            instance.addContentTypeParser('application/octet-stream', { parseAs: 'string' }, (_req, body, done) =>
              done(null, body),
            );
            instance.post('/', async (request) => ({ received: request.body }));
          },
        },
      ],
    });
    const response = await app.inject({
      method: 'POST',
      url: '/api/webhooks/telegram',
      headers: { 'content-type': 'application/octet-stream' },
      payload: 'raw',
    });
    expect(response.json()).toEqual({ received: 'raw' });
    // The raw parser stays inside the channel's context.
    const elsewhere = await app.inject({
      method: 'POST',
      url: '/api/threads',
      headers: { 'content-type': 'application/octet-stream' },
      payload: 'raw',
    });
    expect(elsewhere.statusCode).toBe(415);
  });

  it("holds a channel's deliveries until its first start has ended, and no other channel's", async () => {
    let started!: () => void;
    const firstStart = new Promise<void>((resolve) => {
      started = resolve;
    });
    const handled: string[] = [];
    const { app } = await setup({
      channelRoutes: [
        { name: 'slow', ready: () => firstStart, routes: async (instance) => void instance.post('/', async () => handled.push('slow') && 'ok') },
        { name: 'quick', routes: async (instance) => void instance.post('/', async () => handled.push('quick') && 'ok') },
      ],
    });
    const slow = app.inject({ method: 'POST', url: '/api/webhooks/slow', payload: {} });
    expect((await app.inject({ method: 'POST', url: '/api/webhooks/quick', payload: {} })).statusCode).toBe(200);
    expect(handled).toEqual(['quick']);
    started();
    expect((await slow).statusCode).toBe(200);
    expect(handled).toEqual(['quick', 'slow']);
  });

  it('refuses channel names that are not path segments', async () => {
    await expect(buildTestApp({ channelRoutes: [{ name: '../x', routes: async () => {} }] })).rejects.toThrow(/channelRoutes/);
  });
});
