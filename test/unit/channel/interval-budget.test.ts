import { describe, expect, it } from 'vitest';
import { InProcessIntervalBudget } from '../../../src/channel/interval-budget.js';

describe('InProcessIntervalBudget', () => {
  it('gives one slot per interval per key; forced takes push later ones back', () => {
    let now = 1000;
    const budget = new InProcessIntervalBudget(1200, () => now);
    expect(budget.tryTake('w')).toBe(true);
    expect(budget.tryTake('w')).toBe(false);
    expect(budget.tryTake('other')).toBe(true);
    expect(budget.waitMs('w')).toBe(1200);
    now += 1200;
    expect(budget.tryTake('w')).toBe(true);
    budget.take('w');
    expect(budget.waitMs('w')).toBe(2400);
  });

  it('forgets keys whose slot is free again when many piled up, never a busy one', () => {
    let now = 0;
    const budget = new InProcessIntervalBudget(1000, () => now);
    for (let i = 0; i < 2000; i++) budget.take(`chat-${i}`);
    now = 1000;
    budget.take('busy');
    for (let i = 0; i < 2000; i++) budget.take(`later-${i}`);
    expect(budget.waitMs('busy')).toBe(1000);
    expect(budget.waitMs('chat-0')).toBe(0);
  });
});
