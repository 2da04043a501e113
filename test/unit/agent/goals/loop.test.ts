import { describe, expect, it } from 'vitest';
import type { GoalJudgement } from '../../../../src/agent/goals/evaluator.js';
import {
  continuationMessage,
  decide,
  type GoalDecisionInput,
  GoalProgress,
  toGoalEvaluation,
} from '../../../../src/agent/goals/loop.js';
import type { GoalVerdict } from '../../../../src/db/schema/index.js';

function judged(verdict: GoalVerdict, reason = 'Two tests still fail.'): GoalJudgement {
  return { verdict, reason, evidence: 'The assistant reported 2 failures.' };
}

function input(overrides: Partial<GoalDecisionInput> = {}): GoalDecisionInput {
  return {
    evaluation: judged('not_met_yet'),
    progress: new GoalProgress('Working on it.'),
    maxContinuations: 8,
    aborted: false,
    pendingClarification: false,
    ...overrides,
  };
}

describe('decide', () => {
  it.each([
    ['satisfied', { action: 'cleared' }],
    ['not_met_yet', { action: 'continued' }],
    ['needs_user_input', { action: 'stood_down', standDownReason: 'the evaluator is waiting for input from the user' }],
    ['blocked', { action: 'stood_down', standDownReason: 'the evaluator found the goal blocked' }],
    ['evaluation_failed', { action: 'stood_down', standDownReason: 'the goal could not be evaluated' }],
  ] as const)('answers %s with %o', (verdict, decision) => {
    expect(decide(input({ evaluation: judged(verdict) }))).toEqual(decision);
  });

  it.each([
    ['a cancelled run', { aborted: true }, 'the run was cancelled'],
    ['a pending clarification question', { pendingClarification: true }, "waiting for the user's answer"],
  ])('stands down on not_met_yet after %s', (_what, overrides, standDownReason) => {
    expect(decide(input(overrides))).toEqual({ action: 'stood_down', standDownReason });
  });

  it('still clears a satisfied goal when the run was cancelled', () => {
    expect(decide(input({ evaluation: judged('satisfied'), aborted: true, pendingClarification: true }))).toEqual({
      action: 'cleared',
    });
  });

  it('continues 8 times, then stands down at the cap', () => {
    const progress = new GoalProgress('Step 0');
    for (let step = 1; step <= 8; step++) {
      expect(decide(input({ progress })).action).toBe('continued');
      progress.recordContinuationResult(`Step ${step}`);
    }
    expect(decide(input({ progress }))).toEqual({ action: 'stood_down', standDownReason: 'continuation cap reached (8)' });
  });

  it('never continues with a cap of 0', () => {
    expect(decide(input({ maxContinuations: 0 }))).toEqual({
      action: 'stood_down',
      standDownReason: 'continuation cap reached (0)',
    });
  });

  it('honours a lower cap', () => {
    const progress = new GoalProgress();
    progress.recordContinuationResult('Step 1');
    progress.recordContinuationResult('Step 2');
    expect(decide(input({ progress, maxContinuations: 3 })).action).toBe('continued');
    progress.recordContinuationResult('Step 3');
    expect(decide(input({ progress, maxContinuations: 3 })).standDownReason).toBe('continuation cap reached (3)');
  });
});

describe('the no-progress breaker', () => {
  const stalled = { action: 'stood_down', standDownReason: 'no progress in 2 continuations' };

  it.each([
    ['repeat the same assistant text', ['Still working.', 'Still working.']],
    ['add no assistant text', ['', '  ']],
    ['mix repeated and empty text', ['Still working.', '']],
  ])('stops after 2 continuations that %s', (_what, results) => {
    const progress = new GoalProgress('Still working.');
    progress.recordContinuationResult(results[0] as string);
    expect(decide(input({ progress })).action).toBe('continued');
    progress.recordContinuationResult(results[1] as string);
    expect(progress.isStalled).toBe(true);
    expect(decide(input({ progress }))).toEqual(stalled);
  });

  it('resets when a continuation adds new visible text', () => {
    const progress = new GoalProgress('Step 1 done.');
    progress.recordContinuationResult('Step 1 done.');
    progress.recordContinuationResult('Step 2 done.');
    expect(progress.noProgressStreak).toBe(0);
    progress.recordContinuationResult('Step 2 done.');
    expect(decide(input({ progress })).action).toBe('continued');
    progress.recordContinuationResult('Step 2 done.');
    expect(decide(input({ progress }))).toEqual(stalled);
  });

  it('compares visible text, not the evaluator reason', () => {
    const progress = new GoalProgress('Same answer.');
    progress.recordContinuationResult('Same answer.');
    progress.recordContinuationResult('Same answer.');
    expect(decide(input({ progress, evaluation: judged('not_met_yet', 'A freshly reworded reason.') }))).toEqual(stalled);
  });
});

describe('continuationMessage', () => {
  it('is a hidden human message that restates the goal and quotes the reason', () => {
    const message = continuationMessage('Make CI green', judged('not_met_yet', 'The lint job still fails.'));
    expect(message.type).toBe('human');
    expect(message.additional_kwargs).toEqual({ hide_from_ui: true, goal_continuation: true });
    expect(message.text).toContain('Make CI green');
    expect(message.text).toContain('"The lint job still fails."');
    expect(message.text).toMatch(/keep working toward the goal/i);
  });
});

describe('toGoalEvaluation', () => {
  it('records the verdict, the action and why the loop stopped', () => {
    const at = new Date('2025-01-02T03:04:05.000Z');
    const evaluation = judged('blocked', 'No access to the repo.');
    expect(toGoalEvaluation(evaluation, decide(input({ evaluation })), at)).toEqual({
      verdict: 'blocked',
      reason: 'No access to the repo.',
      evidence: 'The assistant reported 2 failures.',
      action: 'stood_down',
      standDownReason: 'the evaluator found the goal blocked',
      evaluatedAt: '2025-01-02T03:04:05.000Z',
    });
    expect(toGoalEvaluation(judged('satisfied'), { action: 'cleared' }, at)).not.toHaveProperty('standDownReason');
  });
});
