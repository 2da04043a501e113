import { describe, expect, it } from 'vitest';
import {
  checkMaxContinuations,
  MAX_OBJECTIVE_CHARS,
  normalizeObjective,
} from '../../../../src/agent/goals/objective.js';
import { AppError } from '../../../../src/errors.js';

function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

describe('normalizeObjective', () => {
  it.each([
    ['  ship the release  ', 'ship the release'],
    ['fix\tthe   flaky\n\ntest', 'fix the flaky test'],
    ['\n  write docs\r\n for /goal ', 'write docs for /goal'],
    ['one', 'one'],
  ])('normalizes %j to %j', (input, expected) => {
    expect(normalizeObjective(input)).toBe(expected);
  });

  it('accepts exactly 4000 characters, counting an emoji as one', () => {
    expect(normalizeObjective('a'.repeat(MAX_OBJECTIVE_CHARS))).toHaveLength(4000);
    const emojis = '🎯'.repeat(MAX_OBJECTIVE_CHARS);
    expect(normalizeObjective(emojis)).toBe(emojis);
  });

  it('measures the limit after collapsing whitespace', () => {
    const padded = `${'a '.repeat(1999)}a${' '.repeat(500)}`;
    expect(normalizeObjective(padded)).toHaveLength(3999);
  });

  it('refuses 4001 characters with a 422 that names the limit', () => {
    const error = refusal(() => normalizeObjective('a'.repeat(MAX_OBJECTIVE_CHARS + 1)));
    expect(error.code).toBe('UNPROCESSABLE');
    expect(error.status).toBe(422);
    expect(error.userMessage).toContain('4000');
  });

  it.each(['', '   ', '\n\t '])('refuses the empty objective %j with a 422', (input) => {
    const error = refusal(() => normalizeObjective(input));
    expect(error.status).toBe(422);
    expect(error.userMessage).toMatch(/empty/);
  });
});

describe('checkMaxContinuations', () => {
  it.each([0, 1, 8])('accepts %d', (count) => {
    expect(checkMaxContinuations(count)).toBe(count);
  });

  it.each([9, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses %d with a 422 that names the range', (count) => {
    const error = refusal(() => checkMaxContinuations(count));
    expect(error.code).toBe('UNPROCESSABLE');
    expect(error.status).toBe(422);
    expect(error.userMessage).toContain('0 to 8');
  });
});
