import { DrizzleQueryError } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { AppError, describeError, isDatabaseUnavailable } from '../../src/errors.js';

describe('describeError', () => {
  it("keeps a failed query's SQL and the database's reason, never its parameters", () => {
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "follow_ups_pkey"'), { code: '23505' });
    const error = new DrizzleQueryError('insert into "follow_ups" ("message") values ($1)', ['{"text":"my secret plans"}'], cause);

    const described = describeError(error);

    expect(described).toEqual({
      name: 'DrizzleQueryError',
      code: '23505',
      message: 'duplicate key value violates unique constraint "follow_ups_pkey" (in: insert into "follow_ups" ("message") values ($1))',
    });
    expect(JSON.stringify(described)).not.toContain('secret');
  });
});

describe('isDatabaseUnavailable', () => {
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
  const query = (cause: Error) => new DrizzleQueryError('select 1', [], cause);

  it('says yes for a database that cannot be reached, however deep the driver error is wrapped', () => {
    for (const cause of [
      withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      withCode('write CONNECTION_CLOSED 127.0.0.1:5432', 'CONNECTION_CLOSED'),
      withCode('terminating connection due to administrator command', '57P01'),
      withCode('the database system is starting up', '57P03'),
      withCode('connection failure', '08006'),
    ]) {
      expect(isDatabaseUnavailable(query(cause))).toBe(true);
      expect(isDatabaseUnavailable(new AppError('INTERNAL', 'thread not resolved', { cause: query(cause) }))).toBe(true);
    }
  });

  it('says no for a query the database refused, for a pool this process closed, and for anything else', () => {
    expect(isDatabaseUnavailable(query(withCode('duplicate key value', '23505')))).toBe(false);
    expect(isDatabaseUnavailable(query(withCode('write CONNECTION_ENDED', 'CONNECTION_ENDED')))).toBe(false);
    expect(isDatabaseUnavailable(new Error('model failed'))).toBe(false);
    expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
  });
});
