import { DrizzleQueryError } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/errors.js';

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
