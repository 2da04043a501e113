import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentError, NotFoundError, ThreadBusyError } from '../../../../../src/errors.js';
import { runFailure } from '../../../../../src/gateway/routes/langgraph/runs.js';
import type { StreamPart } from '../../../../../src/runtime/types.js';
import { buildTestApp, type StubRuntime } from '../../stub-runtime.js';

let app: FastifyInstance;
let runtime: StubRuntime;
let threadId: string;
beforeEach(async () => {
  ({ app, runtime } = await buildTestApp());
  threadId = (await runtime.createThread()).thread_id;
});
afterEach(async () => {
  await app.close();
});

const input = { messages: [{ role: 'user', content: 'hello' }] };
const post = (path: string, payload: unknown) =>
  app.inject({ method: 'POST', url: `/api/threads/${threadId}${path}`, payload: payload as object });

describe.each(['/runs/stream', '/runs/wait', '/runs'])('POST %s validation', (path) => {
  it('requires assistant_id', async () => {
    const response = await post(path, { input });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/^body\.assistant_id: /),
    });
  });

  it('answers 404 for an unknown assistant and for an unknown thread', async () => {
    const assistant = await post(path, { assistant_id: 'agent', input });
    expect(assistant.statusCode).toBe(404);
    expect(assistant.json()).toEqual({ code: 'NOT_FOUND', message: 'Assistant not found' });
    const thread = await app.inject({
      method: 'POST',
      url: `/api/threads/${randomUUID()}${path}`,
      payload: { assistant_id: 'lead_agent', input },
    });
    expect(thread.statusCode).toBe(404);
    expect(thread.json().code).toBe('NOT_FOUND');
  });

  it('answers 400 for a non-UUID thread id', async () => {
    const response = await app.inject({ method: 'POST', url: `/api/threads/abc${path}`, payload: { assistant_id: 'lead_agent' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe('params.thread_id: must be a UUID');
  });

  it('answers 422 with a reason for multitask strategies other than reject', async () => {
    const response = await post(path, { assistant_id: 'lead_agent', input, multitask_strategy: 'interrupt' });
    expect(response.statusCode).toBe(422);
    expect(response.json().message).toMatch(/multitask_strategy 'interrupt' is not supported/);
    expect(runtime.calls.filter((call) => call.method !== 'createThread')).toEqual([]);
  });

  it('answers 409 when the thread is busy', async () => {
    runtime.busy.add(threadId);
    const response = await post(path, { assistant_id: 'lead_agent', input });
    expect(response.statusCode).toBe(409);
    expect(response.headers['content-type']).toMatch(/application\/json/);
    expect(response.json()).toEqual({ code: 'THREAD_BUSY', message: 'Thread is busy with another run.' });
  });

  it('accepts every SDK option and passes the runtime a normalized request', async () => {
    const response = await post(path, {
      assistant_id: 'lead_agent',
      input: { messages: [{ type: 'human', content: [{ type: 'text', text: 'hel' }, { type: 'text', text: 'lo' }] }] },
      config: { recursion_limit: 10, configurable: { thread_id: 'x' }, tags: ['a'], run_name: 'ignored' },
      context: { agent_name: 'reviewer' },
      metadata: { source: 'test' },
      multitask_strategy: 'reject',
      stream_mode: 'values',
      stream_resumable: true,
      stream_subgraphs: false,
      on_disconnect: 'cancel',
      if_not_exists: 'reject',
      command: null,
      checkpoint: null,
    });
    expect(response.statusCode).toBe(200);
    const call = runtime.calls.find((c) => c.request);
    expect(call?.request).toEqual({
      assistant_id: 'lead_agent',
      input: { messages: [{ role: 'human', content: 'hello' }] },
      config: { recursion_limit: 10, configurable: { thread_id: 'x' }, tags: ['a'] },
      // The server's decision, not a hint: no principal on an open server is the operator.
      context: { agent_name: 'reviewer', trusted_sender: true },
      metadata: { source: 'test' },
      multitask_strategy: 'reject',
      stream_mode: ['values'],
    });
  });

  it('creates a missing thread with if_not_exists create', async () => {
    const newThread = randomUUID();
    const response = await app.inject({
      method: 'POST',
      url: `/api/threads/${newThread}${path}`,
      payload: { assistant_id: 'lead_agent', input, if_not_exists: 'create' },
    });
    expect(response.statusCode).toBe(200);
    expect(runtime.threads.has(newThread)).toBe(true);
  });
});

describe('POST /runs/stream', () => {
  it('streams every part as an SSE frame with Content-Location, then closes', async () => {
    runtime.parts = [
      { event: 'metadata', data: { run_id: 'r', attempt: 1 } },
      { event: 'messages', data: [{ type: 'ai', content: 'Hi\nthere' }, { langgraph_node: 'agent' }] },
      { event: 'values', data: { messages: [] } },
    ];
    const response = await post('/runs/stream', { assistant_id: 'lead_agent', input, stream_mode: ['messages-tuple', 'values'] });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream');
    const [run] = [...runtime.runs.values()];
    expect(response.headers['content-location']).toBe(`/threads/${threadId}/runs/${run?.run_id}`);
    expect(response.body).toBe(
      'event: metadata\ndata: {"run_id":"r","attempt":1}\n\n' +
        'event: messages\ndata: [{"type":"ai","content":"Hi\\nthere"},{"langgraph_node":"agent"}]\n\n' +
        'event: values\ndata: {"messages":[]}\n\n',
    );
    expect(runtime.calls.at(-1)?.request?.stream_mode).toEqual(['messages-tuple', 'values']);
  });

  it('answers 422 for stream modes the runtime does not serve, 400 for unknown ones', async () => {
    const unsupported = await post('/runs/stream', { assistant_id: 'lead_agent', stream_mode: ['values', 'debug'] });
    expect(unsupported.statusCode).toBe(422);
    expect(unsupported.json().message).toMatch(/stream_mode 'debug' is not supported/);
    const unknown = await post('/runs/stream', { assistant_id: 'lead_agent', stream_mode: 'everything' });
    expect(unknown.statusCode).toBe(400);
  });

  it('ends with a generic error frame if the runtime stream throws', async () => {
    runtime.events = async function* () {
      yield { event: 'values', data: {} };
      throw new Error('secret internals');
    };
    const response = await post('/runs/stream', { assistant_id: 'lead_agent', input });
    expect(response.body).toBe(
      'event: values\ndata: {}\n\nevent: error\ndata: {"error":"INTERNAL","message":"Internal server error"}\n\n',
    );
  });
});

describe('client disconnect', () => {
  /** A stream that yields one part, then waits until the run is aborted. */
  function holdOpen(): { aborted: Promise<boolean>; events: (signal: AbortSignal | undefined) => AsyncIterable<StreamPart> } {
    let resolveAborted: (value: boolean) => void = () => {};
    const aborted = new Promise<boolean>((resolve) => {
      resolveAborted = resolve;
    });
    return {
      aborted,
      events: async function* (signal) {
        yield { event: 'metadata', data: { run_id: 'r' } };
        if (!signal) return resolveAborted(false);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        resolveAborted(true);
      },
    };
  }

  /** Opens the stream over a real socket, reads the first frame, then drops the connection. */
  async function streamThenDisconnect(body: Record<string, unknown>): Promise<void> {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    // node:http rather than fetch: undici opens a spare socket that delays app.close() by seconds.
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: `/api/threads/${threadId}/runs/stream`,
      headers: { 'content-type': 'application/json' },
      agent: false,
    });
    request.end(JSON.stringify({ assistant_id: 'lead_agent', input, ...body }));
    const [response] = (await once(request, 'response')) as [http.IncomingMessage];
    await once(response, 'data');
    request.destroy();
  }

  it('aborts the run when the client goes away', async () => {
    const held = holdOpen();
    runtime.events = held.events;
    await streamThenDisconnect({});
    expect(await held.aborted).toBe(true);
  });

  it("lets the run go on with on_disconnect 'continue'", async () => {
    const held = holdOpen();
    runtime.events = held.events;
    await streamThenDisconnect({ on_disconnect: 'continue' });
    expect(await held.aborted).toBe(false);
  });
});

describe('POST /runs/wait', () => {
  it('answers the final values with Content-Location', async () => {
    const response = await post('/runs/wait', { assistant_id: 'lead_agent', input });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ messages: [{ type: 'ai', content: 'hi' }] });
    expect(response.headers['content-location']).toMatch(new RegExp(`^/threads/${threadId}/runs/[0-9a-f-]{36}$`));
  });

  it('answers a failed run with 200 and __error__, showing only the userMessage', async () => {
    runtime.waitResult = async () => {
      throw new AgentError('MODEL_FAILED', 'openai 401: bad key sk-abc', { userMessage: 'The model failed.' });
    };
    const written = await post('/runs/wait', { assistant_id: 'lead_agent', input });
    expect(written.statusCode).toBe(200);
    expect(written.json()).toEqual({ __error__: { error: 'MODEL_FAILED', message: 'The model failed.' } });

    runtime.waitResult = async () => {
      throw new TypeError('cannot read x of undefined');
    };
    const unknown = await post('/runs/wait', { assistant_id: 'lead_agent', input });
    expect(unknown.json()).toEqual({ __error__: { error: 'INTERNAL', message: 'Internal server error' } });
  });
});

describe('POST /runs and GET /runs/:run_id', () => {
  it('creates a run with Content-Location and reads it back', async () => {
    const created = await post('/runs', { assistant_id: 'lead_agent', input });
    expect(created.statusCode).toBe(200);
    const run = created.json();
    expect(run).toMatchObject({ thread_id: threadId, assistant_id: 'lead_agent', status: 'pending', multitask_strategy: 'reject' });
    expect(created.headers['content-location']).toBe(`/threads/${threadId}/runs/${run.run_id}`);
    const fetched = await app.inject({ method: 'GET', url: `/api/threads/${threadId}/runs/${run.run_id}` });
    expect(fetched.json()).toEqual(run);
  });

  it('answers 404 for an unknown run and 400 for a non-UUID run id', async () => {
    const unknown = await app.inject({ method: 'GET', url: `/api/threads/${threadId}/runs/${randomUUID()}` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ code: 'NOT_FOUND', message: 'Run not found' });
    const bad = await app.inject({ method: 'GET', url: `/api/threads/${threadId}/runs/nope` });
    expect(bad.json()).toEqual({ code: 'BAD_REQUEST', message: 'params.run_id: must be a UUID' });
  });
});

describe('POST /runs/:run_id/cancel', () => {
  async function createRun(): Promise<string> {
    return (await runtime.createRun(threadId, { assistant_id: 'lead_agent' })).run_id;
  }
  const cancel = (runId: string, query: string) =>
    app.inject({ method: 'POST', url: `/api/threads/${threadId}/runs/${runId}/cancel${query}` });

  it.each([
    ['?wait=0&action=interrupt', 202, false],
    ['?wait=1&action=interrupt', 204, true],
    ['', 202, false],
  ])('%s answers %i with an empty body', async (query, status, wait) => {
    const runId = await createRun();
    const response = await cancel(runId, query);
    expect(response.statusCode).toBe(status);
    expect(response.body).toBe('');
    expect(runtime.calls.at(-1)).toEqual({ method: 'cancelRun', threadId, options: { wait } });
    expect(runtime.runs.get(runId)?.status).toBe('interrupted');
  });

  it('answers 422 for rollback, 400 for an unknown action, 404 for an unknown run', async () => {
    const runId = await createRun();
    expect((await cancel(runId, '?action=rollback')).statusCode).toBe(422);
    expect((await cancel(runId, '?action=explode')).json().message).toMatch(/^query\.action: /);
    expect((await cancel(randomUUID(), '?wait=0')).statusCode).toBe(404);
  });
});

describe('runFailure', () => {
  it.each([
    [new ThreadBusyError('t'), undefined],
    [new NotFoundError('Thread'), undefined],
    [new AgentError('RUN_CANCELLED', 'x', { status: 409, userMessage: 'The run was cancelled.' }), { error: 'RUN_CANCELLED', message: 'The run was cancelled.' }],
    [new AgentError('MODEL_NOT_CONFIGURED', 'x', { status: 503, userMessage: 'No model.' }), { error: 'MODEL_NOT_CONFIGURED', message: 'No model.' }],
    [new AgentError('MODEL_FAILED', 'openai said sk-1', { status: 502 }), { error: 'MODEL_FAILED', message: 'Internal server error' }],
    [new Error('x'), { error: 'INTERNAL', message: 'Internal server error' }],
  ])('%o → %j', (error, expected) => {
    expect(runFailure(error)).toEqual(expected);
  });
});
