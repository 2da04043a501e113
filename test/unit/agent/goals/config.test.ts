import { describe, expect, it } from 'vitest';
import { goalsConfigSchema } from '../../../../src/agent/goals/config.js';

describe('goalsConfigSchema', () => {
  it('fills every default from an absent section', () => {
    expect(goalsConfigSchema.parse(undefined)).toEqual({ enabled: true, max_continuations: 8 });
  });

  it.each([
    ['an unknown key', { max_turns: 3 }],
    ['a cap over 8', { max_continuations: 9 }],
    ['a negative cap', { max_continuations: -1 }],
    ['a fractional cap', { max_continuations: 1.5 }],
    ['an empty evaluator model name', { evaluator_model: '' }],
  ])('rejects %s', (_what, section) => {
    expect(goalsConfigSchema.safeParse(section).success).toBe(false);
  });

  it('keeps an explicit evaluator model and cap', () => {
    expect(goalsConfigSchema.parse({ evaluator_model: 'small', max_continuations: 0 })).toEqual({
      enabled: true,
      evaluator_model: 'small',
      max_continuations: 0,
    });
  });
});
