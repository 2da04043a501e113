import { describe, expect, it } from 'vitest';
import { modelTroubleOf } from '../../../src/agent/model-trouble.js';

class APIConnectionError extends Error {}

describe('modelTroubleOf', () => {
  it.each([
    ['a 401', { status: 401 }, 'key_refused'],
    ['a 403', { status: 403 }, 'key_refused'],
    ["LangChain's MODEL_AUTHENTICATION", { lc_error_code: 'MODEL_AUTHENTICATION' }, 'key_refused'],
    ['a 404', { status: 404 }, 'model_unknown'],
    ['a 429', { status: 429 }, 'rate_limited'],
    ["the SDK's connection error, whose name stays Error", new APIConnectionError('Connection error.'), 'unreachable'],
    ['a timeout', Object.assign(new Error('timed out'), { name: 'TimeoutError' }), 'unreachable'],
    ['a refused connection in the cause', { message: 'fetch failed', cause: { code: 'ECONNREFUSED' } }, 'unreachable'],
    ['a wrapped 401', new Error('run failed', { cause: { status: 401 } }), 'key_refused'],
  ])('reads %s as %s', (_what, error, trouble) => {
    expect(modelTroubleOf(error)).toBe(trouble);
  });

  it.each([
    ['a 500', { status: 500 }],
    ['a 400', { status: 400 }],
    ['a plain error', new Error('bug')],
    ['nothing', undefined],
  ])('leaves %s to the generic reply', (_what, error) => {
    expect(modelTroubleOf(error)).toBeUndefined();
  });
});
