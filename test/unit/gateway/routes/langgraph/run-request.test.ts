import { describe, expect, it } from 'vitest';
import { AppError, NotFoundError } from '../../../../../src/errors.js';
import type { Principal } from '../../../../../src/gateway/auth.js';
import { runLocation, toRunRequest, trustOf } from '../../../../../src/gateway/routes/langgraph/run-request.js';
import { runBodySchema } from '../../../../../src/gateway/routes/langgraph/schemas.js';

const parse = (body: Record<string, unknown>) => runBodySchema.parse(body);

describe('toRunRequest', () => {
  it.each([
    [{ assistant_id: 'lead_agent' }, { assistant_id: 'lead_agent' }],
    [
      { assistant_id: 'lead_agent', input: null, config: null, stream_mode: null, multitask_strategy: null },
      { assistant_id: 'lead_agent' },
    ],
    [
      { assistant_id: 'lead_agent', stream_mode: 'messages-tuple', multitask_strategy: 'reject' },
      { assistant_id: 'lead_agent', stream_mode: ['messages-tuple'], multitask_strategy: 'reject' },
    ],
    [
      { assistant_id: 'lead_agent', input: { messages: [{ role: 'user', content: 'hi', id: 'm1' }], extra: 1 } },
      { assistant_id: 'lead_agent', input: { messages: [{ role: 'user', content: 'hi' }] } },
    ],
  ])('%j → %j', (body, expected) => {
    expect(toRunRequest(parse(body))).toEqual(expected);
  });

  it.each([
    [{ assistant_id: 'agent' }, NotFoundError, 404],
    [{ assistant_id: 'lead_agent', multitask_strategy: 'enqueue' }, AppError, 422],
    [{ assistant_id: 'lead_agent', multitask_strategy: 'rollback' }, AppError, 422],
    [{ assistant_id: 'lead_agent', stream_mode: ['values', 'tasks'] }, AppError, 422],
  ])('%j throws %o with status %i', (body, type, status) => {
    expect(() => toRunRequest(parse(body))).toThrow(type);
    try {
      toRunRequest(parse(body));
    } catch (error) {
      expect((error as AppError).status).toBe(status);
    }
  });

  it.each([
    [{}, ['assistant_id']],
    [{ assistant_id: '' }, ['assistant_id']],
    [{ assistant_id: 'lead_agent', input: { messages: [{ role: 'ai', content: 'x' }] } }, ['input', 'messages', 0, 'role']],
    [{ assistant_id: 'lead_agent', input: { messages: [{ content: 'x' }] } }, ['input', 'messages', 0, 'role']],
    [{ assistant_id: 'lead_agent', on_disconnect: 'later' }, ['on_disconnect']],
  ])('rejects %j at %j', (body, path) => {
    const result = runBodySchema.safeParse(body);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(path);
  });
});

describe('runLocation', () => {
  it('is the path the SDK parses run and thread ids from', () => {
    expect(runLocation({ thread_id: 't', run_id: 'r' })).toBe('/threads/t/runs/r');
  });
});

describe('trustOf: whether a gateway caller gets bash', () => {
  const user = (canUseShell: boolean): Principal => ({ kind: 'user', user: { id: 'u', name: 'u', canUseShell, isDisabled: false, createdAt: new Date(0) } });

  it.each<[string, Principal | undefined, unknown, boolean]>([
    ['the operator', { kind: 'operator' }, undefined, true],
    ['the operator acting for an untrusted sender', { kind: 'operator' }, false, false],
    ['no principal (an open server without accounts)', undefined, undefined, true],
    ['no principal, claiming trust', undefined, true, true],
    ['no principal, giving trust away', undefined, false, false],
    ['an ungranted user', user(false), undefined, false],
    ['an ungranted user claiming trust in the body', user(false), true, false],
    ['an ungranted user claiming trust as a string', user(false), 'true', false],
    ['a granted user', user(true), undefined, true],
    ['a granted user giving trust away', user(true), false, false],
  ])('%s → %s', (_name, principal, claimed, expected) => {
    expect(trustOf(principal, claimed)).toBe(expected);
  });
});
