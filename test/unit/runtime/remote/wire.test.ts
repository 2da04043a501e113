import { describe, expect, it } from 'vitest';
import { AgentError, AppError, ConflictError, NotFoundError, ThreadBusyError } from '../../../../src/errors.js';
import {
  type CallContext,
  fromFailedCall,
  fromHttpStatus,
  remoteStreamModes,
  runFailureError,
  StreamPartTranslator,
  toModelInfos,
  toRunFailure,
} from '../../../../src/runtime/remote/wire.js';

const HOST = 'agent-host:8001';
const THREAD = '11111111-1111-4111-8111-111111111111';
const admission: CallContext = { operation: 'POST /threads/:thread_id/runs/stream', subject: 'Thread', admitsRunOn: THREAD };
const threadRead: CallContext = { operation: 'GET /threads/:thread_id', subject: 'Thread' };
const ours = (code: string, message: string, extra: Record<string, unknown> = {}) => JSON.stringify({ code, message, ...extra });

describe('fromHttpStatus', () => {
  it('maps the statuses the contract names', () => {
    expect(fromHttpStatus(404, ours('NOT_FOUND', 'Run not found'), HOST, { ...threadRead, subject: 'Run' })).toEqual(new NotFoundError('Run'));

    const busy = fromHttpStatus(409, ours('THREAD_BUSY', 'Thread is busy with another run.', { active_run_id: 'run-1' }), HOST, admission);
    expect(busy).toBeInstanceOf(ThreadBusyError);
    expect(busy).toMatchObject({ code: 'THREAD_BUSY', status: 409, activeRunId: 'run-1' });
    // LangGraph Platform's busy thread: no code of ours, but the call admits a run.
    expect(fromHttpStatus(409, '{"detail":"Thread is busy"}', HOST, admission)).toBeInstanceOf(ThreadBusyError);
    expect(fromHttpStatus(409, ours('CONFLICT', `Thread ${THREAD} already exists.`), HOST, threadRead)).toBeInstanceOf(ConflictError);

    expect(fromHttpStatus(422, ours('UNPROCESSABLE', 'The objective is over 4000 characters.'), HOST, threadRead)).toMatchObject({
      code: 'UNPROCESSABLE',
      status: 422,
      userMessage: 'The objective is over 4000 characters.',
    });
    expect(fromHttpStatus(422, '{"detail":[{"loc":["body","input"],"input":"the user\'s text"}]}', HOST, threadRead)).toMatchObject({
      code: 'BAD_REQUEST',
      status: 422,
      userMessage: 'The agent server could not process this request.',
    });
    expect(fromHttpStatus(503, ours('MODEL_NOT_CONFIGURED', 'No model is configured on this server.'), HOST, admission)).toMatchObject({
      name: 'AgentError',
      code: 'MODEL_NOT_CONFIGURED',
      status: 503,
    });
  });

  it('never shows a server error body, a foreign body or a secret', () => {
    const failure = fromHttpStatus(500, ours('INTERNAL', 'stack trace with sk-abcdef123456'), HOST, threadRead);
    expect(failure).toMatchObject({ status: 503, userMessage: `The agent server at ${HOST} is not reachable right now. Please try again in a moment.` });
    expect(failure.message).not.toContain('sk-');
    expect(fromHttpStatus(400, ours('BAD_REQUEST', 'token=abcdef123456 is wrong'), HOST, threadRead).userMessage).toBe('token=[redacted] is wrong');
    expect(fromHttpStatus(400, 'Bad Request: your prompt was ...', HOST, threadRead).userMessage).toBe('The agent server refused this request.');
  });

  it("reads a refused key as the operator's problem, not the caller's", () => {
    expect(fromHttpStatus(401, ours('UNAUTHORIZED', 'Missing or invalid API key.'), HOST, threadRead)).toMatchObject({
      code: 'UNAUTHORIZED',
      status: 503,
      userMessage: expect.stringContaining(HOST),
    });
  });
});

describe('fromFailedCall', () => {
  it("reads the SDK's HTTPError by its status and body, and anything else as unreachable", () => {
    const httpError = Object.assign(new Error('HTTP 404: ...'), { status: 404, text: ours('NOT_FOUND', 'Thread not found') });
    expect(fromFailedCall(httpError, HOST, threadRead)).toBeInstanceOf(NotFoundError);
    const refused = Object.assign(new Error('Unable to connect to LangGraph server.'), { name: 'ConnectionError' });
    expect(fromFailedCall(refused, HOST, threadRead)).toMatchObject({ status: 503, cause: refused });
    const own = new AppError('BAD_REQUEST', 'x', { status: 400 });
    expect(fromFailedCall(own, HOST, threadRead)).toBe(own);
  });
});

describe('run failures', () => {
  it("keeps our codes and written messages, and hides a foreign server's exception", () => {
    expect(toRunFailure({ error: 'RECURSION_LIMIT', message: 'I stopped after 100 steps.' })).toEqual({ error: 'RECURSION_LIMIT', message: 'I stopped after 100 steps.' });
    expect(toRunFailure({ error: 'GraphRecursionError', message: 'Recursion limit of 25 reached' })).toMatchObject({ error: 'RECURSION_LIMIT' });
    expect(toRunFailure({ error: 'ValueError', message: 'secret internals' })).toEqual({ error: 'MODEL_FAILED', message: 'The agent run failed. Please try again.' });
    expect(toRunFailure('nonsense')).toMatchObject({ error: 'MODEL_FAILED' });
  });

  it('rejects with the status the embedded runtime gives each code', () => {
    const cancelled = runFailureError({ error: 'RUN_CANCELLED', message: 'The run was cancelled.' });
    expect(cancelled).toBeInstanceOf(AgentError);
    expect(cancelled).toMatchObject({ code: 'RUN_CANCELLED', status: 409, userMessage: 'The run was cancelled.' });
    expect(runFailureError({ error: 'MODEL_FAILED', message: 'x' }).status).toBe(502);
  });
});

describe('StreamPartTranslator', () => {
  it('passes the embedded kinds of parts through unchanged and normalises errors', () => {
    const translator = new StreamPartTranslator();
    const tuple = { event: 'messages', data: [{ type: 'AIMessageChunk', id: 'm1', content: 'Hi' }, { langgraph_node: 'model' }] };
    expect(translator.translate(tuple)).toEqual([tuple]);
    expect(translator.translate({ event: 'values', data: { messages: [] } })).toEqual([{ event: 'values', data: { messages: [] } }]);
    expect(translator.translate({ event: 'end', data: null })).toEqual([]);
    expect(translator.translate({ event: 'error', data: { error: 'RUN_CANCELLED', message: 'The run was cancelled.' } })).toEqual([
      { event: 'error', data: { error: 'RUN_CANCELLED', message: 'The run was cancelled.' } },
    ]);
  });

  it('cuts messages/partial and messages/complete into the deltas of messages parts', () => {
    const translator = new StreamPartTranslator();
    expect(translator.translate({ event: 'messages/metadata', data: { m1: { metadata: { langgraph_node: 'model' } } } })).toEqual([]);
    const partial = (content: string) => ({ event: 'messages/partial', data: [{ type: 'ai', id: 'm1', content }] });
    expect(translator.translate(partial('Hel'))).toEqual([{ event: 'messages', data: [{ type: 'ai', id: 'm1', content: 'Hel' }, { langgraph_node: 'model' }] }]);
    expect(translator.translate(partial('Hello'))).toEqual([{ event: 'messages', data: [{ type: 'ai', id: 'm1', content: 'lo' }, { langgraph_node: 'model' }] }]);
    // The complete message repeats the text: nothing new to send.
    expect(translator.translate({ event: 'messages/complete', data: [{ type: 'ai', id: 'm1', content: 'Hello' }] })).toEqual([]);
  });
});

describe('remoteStreamModes and toModelInfos', () => {
  it("asks for tuples instead of 'messages', once", () => {
    expect(remoteStreamModes(['messages', 'messages-tuple', 'values'])).toEqual(['messages-tuple', 'values']);
    expect(remoteStreamModes(undefined)).toBeUndefined();
  });

  it('keeps the fields a ModelInfo has, and only those', () => {
    expect(
      toModelInfos({
        models: [
          { name: 'fast', model: 'gpt-4o-mini', thinking: 'off', supports_vision: true, api_base: 'http://internal' },
          { name: 'deerflow', model: 'x', supports_thinking: true, display_name: 'X' },
          { model: 'nameless' },
        ],
        token_usage: { enabled: false },
      }),
    ).toEqual([
      { name: 'fast', model: 'gpt-4o-mini', thinking: 'off', supports_vision: true },
      { name: 'deerflow', model: 'x' },
    ]);
    expect(toModelInfos({ detail: 'Not Found' })).toBeUndefined();
  });
});
