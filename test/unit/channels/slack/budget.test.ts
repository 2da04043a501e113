import { describe, expect, it } from 'vitest';
import { ReplyGate, WORKSPACE_KEY } from '../../../../channels/slack/budget.js';
import { InProcessIntervalBudget } from '../../../../src/channel/interval-budget.js';
import { InProcessRateGate } from '../../../../src/channel/rate-gate.js';

describe('ReplyGate', () => {
  it('holds partials for the shared gate and the budget, finals only for the gate', () => {
    let now = 1000;
    let isFinal = false;
    const shared = new InProcessRateGate({ now: () => now });
    const budget = new InProcessIntervalBudget(1200, () => now);
    const gate = new ReplyGate({ shared, budget, isFinal: () => isFinal, now: () => now });
    expect(gate.isOpen('r')).toBe(true);
    budget.take(WORKSPACE_KEY);
    expect(gate.blockedUntil('r')).toBe(2200);
    isFinal = true;
    expect(gate.isOpen('r')).toBe(true);
    shared.block(WORKSPACE_KEY, 3000);
    expect(gate.blockedUntil('r')).toBe(4000);
    gate.block('r', 5000);
    expect(gate.blockedUntil('r')).toBe(6000);
    expect(gate.isOpen('other')).toBe(false);
    now = 6000;
    expect(gate.isOpen('r')).toBe(true);
  });
});
