import { describe, expect, it } from 'vitest';
import { AgentError, AppError, ConflictError, NotFoundError, ThreadBusyError } from '../../../src/errors.js';
import { toErrorResponse } from '../../../src/gateway/error-handler.js';

const internal = { status: 500, body: { code: 'INTERNAL', message: 'Internal server error' } };

describe('toErrorResponse', () => {
  it.each([
    ['NotFoundError', new NotFoundError('Thread'), { status: 404, body: { code: 'NOT_FOUND', message: 'Thread not found' } }],
    [
      'ThreadBusyError',
      new ThreadBusyError('t1'),
      { status: 409, body: { code: 'THREAD_BUSY', message: 'Thread is busy with another run.' } },
    ],
    ['ConflictError', new ConflictError('Thread exists.'), { status: 409, body: { code: 'CONFLICT', message: 'Thread exists.' } }],
    [
      'AppError 4xx without userMessage',
      new AppError('BAD_REQUEST', 'secret detail', { status: 422 }),
      { status: 422, body: { code: 'BAD_REQUEST', message: 'Unprocessable Entity' } },
    ],
    ['AppError 5xx with userMessage', new AgentError('MODEL_FAILED', 'x', { userMessage: 'shown?' }), internal],
    [
      'AppError 503 with userMessage (a known state, e.g. no model)',
      new AgentError('MODEL_NOT_CONFIGURED', 'none', { status: 503, userMessage: 'No model is configured.' }),
      { status: 503, body: { code: 'MODEL_NOT_CONFIGURED', message: 'No model is configured.' } },
    ],
    ['AppError 503 without userMessage', new AppError('INTERNAL', 'pool exhausted', { status: 503 }), internal],
    ['plain Error', new Error('ECONNREFUSED 10.0.0.3:5432'), internal],
    ['a thrown string', 'boom', internal],
    ['null', null, internal],
    [
      'Fastify invalid JSON',
      Object.assign(new Error("Body is not valid JSON but content-type is set to 'application/json'"), {
        code: 'FST_ERR_CTP_INVALID_JSON_BODY',
        statusCode: 400,
      }),
      { status: 400, body: { code: 'BAD_REQUEST', message: 'Request body is not valid JSON.' } },
    ],
    [
      'other Fastify 4xx',
      Object.assign(new Error("'%' is not a valid url component"), { code: 'FST_ERR_BAD_URL', statusCode: 400 }),
      { status: 400, body: { code: 'BAD_REQUEST', message: 'Bad Request' } },
    ],
    ['Fastify 5xx', Object.assign(new Error('x'), { code: 'FST_ERR_X', statusCode: 503 }), internal],
  ])('%s', (_name, error, expected) => {
    expect(toErrorResponse(error)).toEqual(expected);
  });
});
