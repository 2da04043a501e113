import { HumanMessage } from '@langchain/core/messages';
import type { GoalAction, GoalEvaluation } from '../../db/schema/index.js';
import type { GoalJudgement } from './evaluator.js';

/** Consecutive continuations without new visible assistant text that stop the loop. */
export const NO_PROGRESS_LIMIT = 2;

/**
 * How far the goal loop got after one visible user turn: hidden continuations used, and how many
 * of the latest ones added no new visible assistant text. Make one per run; the count restarts
 * whenever the user speaks.
 */
export class GoalProgress {
  private usedCount = 0;
  private streak = 0;
  private lastAssistantText: string;

  /** @param visibleTurnAssistantText latest visible assistant text after the user's turn (`''` if none). */
  constructor(visibleTurnAssistantText = '') {
    this.lastAssistantText = visibleTurnAssistantText.trim();
  }

  /** Hidden continuations run so far. */
  get continuationsUsed(): number {
    return this.usedCount;
  }

  /** Latest continuations in a row that added no new visible assistant text. */
  get noProgressStreak(): number {
    return this.streak;
  }

  /** True once {@link NO_PROGRESS_LIMIT} continuations in a row added nothing visible. */
  get isStalled(): boolean {
    return this.streak >= NO_PROGRESS_LIMIT;
  }

  /**
   * Call once after every hidden continuation turn, finished or failed, with the latest visible
   * assistant text of the thread. Text that is empty or equal to what was there before counts as
   * no progress; anything new resets the streak. The evaluator's reason is deliberately not
   * compared: a model rewords it every time, so it would never look stalled.
   */
  recordContinuationResult(latestVisibleAssistantText: string): void {
    this.usedCount++;
    const text = latestVisibleAssistantText.trim();
    if (text === '' || text === this.lastAssistantText) {
      this.streak++;
      return;
    }
    this.streak = 0;
    this.lastAssistantText = text;
  }
}

export interface GoalDecisionInput {
  evaluation: GoalJudgement;
  progress: GoalProgress;
  /** Effective cap for this run: the smaller of the goal's and `goals.max_continuations`. */
  maxContinuations: number;
  /** The run was cancelled; never continue a cancelled run. */
  aborted: boolean;
  /** The turn ended with the agent asking the user a clarification question. */
  pendingClarification: boolean;
}

export interface GoalDecision {
  action: GoalAction;
  /** Why the loop stopped; set exactly when `action` is `stood_down`. */
  standDownReason?: string;
}

const VERDICT_STAND_DOWN_REASONS = {
  needs_user_input: 'the evaluator is waiting for input from the user',
  blocked: 'the evaluator found the goal blocked',
  evaluation_failed: 'the goal could not be evaluated',
} as const;

/**
 * What the runtime does with a verdict. `satisfied` clears the goal. `not_met_yet` continues
 * with a hidden message unless the run was cancelled, the agent is waiting for the user's answer,
 * the no-progress breaker fired or the cap is reached, checked in that order. Every other
 * verdict stands down: the goal stays, and the loop waits until the user speaks. Pure.
 */
export function decide(input: GoalDecisionInput): GoalDecision {
  const { verdict } = input.evaluation;
  if (verdict === 'satisfied') return { action: 'cleared' };
  if (verdict !== 'not_met_yet') return standDown(VERDICT_STAND_DOWN_REASONS[verdict]);
  if (input.aborted) return standDown('the run was cancelled');
  if (input.pendingClarification) return standDown("waiting for the user's answer");
  if (input.progress.isStalled) return standDown(`no progress in ${NO_PROGRESS_LIMIT} continuations`);
  if (input.progress.continuationsUsed >= input.maxContinuations) {
    return standDown(`continuation cap reached (${input.maxContinuations})`);
  }
  return { action: 'continued' };
}

function standDown(standDownReason: string): GoalDecision {
  return { action: 'stood_down', standDownReason };
}

/** The record to store (`GoalStore.recordEvaluation`) for a verdict and what was done with it. */
export function toGoalEvaluation(evaluation: GoalJudgement, decision: GoalDecision, evaluatedAt: Date): GoalEvaluation {
  return {
    verdict: evaluation.verdict,
    reason: evaluation.reason,
    evidence: evaluation.evidence,
    action: decision.action,
    ...(decision.standDownReason === undefined ? {} : { standDownReason: decision.standDownReason }),
    evaluatedAt: evaluatedAt.toISOString(),
  };
}

/**
 * The hidden user message that sends the agent back to work: it restates the objective and
 * quotes the evaluator's reason. `hide_from_ui` keeps it out of chats and out of the evaluator's
 * view; `goal_continuation` lets the runtime tell it from other hidden messages.
 */
export function continuationMessage(objective: string, evaluation: GoalJudgement): HumanMessage {
  const reason = evaluation.reason === '' ? 'no reason given' : evaluation.reason;
  const content = [
    '<goal_continuation>',
    `Active goal: ${objective}`,
    `The goal is not met yet. Evaluator's reason: "${reason}"`,
    'Keep working toward the goal with the tools and the conversation so far. Do not ask the user whether to continue; ask only if you genuinely need their input.',
    '</goal_continuation>',
  ].join('\n');
  return new HumanMessage({ content, additional_kwargs: { hide_from_ui: true, goal_continuation: true } });
}
