import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { BaseMessage, HumanMessage } from '@langchain/core/messages';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { ASK_CLARIFICATION } from '../clarification.js';
import { evaluateGoal, latestVisibleAssistantText } from './evaluator.js';
import { continuationMessage, decide, GoalProgress, toGoalEvaluation } from './loop.js';
import type { GoalStore } from './store.js';

export interface DriveGoalOptions {
  store: GoalStore;
  threadId: string;
  runId: string;
  /** The thread's messages after the visible turn. */
  messages: BaseMessage[];
  evaluator: BaseChatModel;
  /** `goals.max_continuations`; the goal's own cap applies too, whichever is smaller. */
  maxContinuations: number;
  signal: AbortSignal;
  /** Runs one hidden continuation turn on the thread; resolves with the thread's messages after it. */
  continueWith(message: HumanMessage): Promise<BaseMessage[]>;
  logger: Logger;
  now?: () => Date;
}

/**
 * The goal loop after a visible turn: judge, record the verdict, and continue with a hidden
 * message while the verdict is `not_met_yet` and `decide` allows it. Resolves with the thread's
 * messages after the last turn. Evaluation and storage failures end the loop with a warning, never
 * the run: the user's turn already succeeded. A failing continuation turn rejects (it is a run
 * failure like any other).
 */
export async function driveGoal(options: DriveGoalOptions): Promise<BaseMessage[]> {
  const { store, threadId, runId, logger } = options;
  const now = options.now ?? (() => new Date());
  let messages = options.messages;
  const progress = new GoalProgress(latestVisibleAssistantText(messages));
  for (;;) {
    let next: HumanMessage | undefined;
    try {
      next = await judge();
    } catch (error) {
      logger.warn({ threadId, runId, err: describeError(error) }, 'goal evaluation could not be completed');
      return messages;
    }
    if (!next) return messages;
    messages = await options.continueWith(next);
    progress.recordContinuationResult(latestVisibleAssistantText(messages));
  }

  /** One verdict, recorded; the continuation message when the loop goes on. */
  async function judge(): Promise<HumanMessage | undefined> {
    const goal = await store.get(threadId);
    if (!goal) return undefined;
    const judgement = await evaluateGoal({ model: options.evaluator, objective: goal.objective, messages, signal: options.signal });
    const decision = decide({
      evaluation: judgement,
      progress,
      maxContinuations: Math.min(goal.maxContinuations, options.maxContinuations),
      aborted: options.signal.aborted,
      pendingClarification: endsInClarification(messages),
    });
    const evaluation = toGoalEvaluation(judgement, decision, now());
    // False when the goal was cleared or replaced while the evaluator ran: that verdict is history only.
    const isCurrent = await store.recordEvaluation({ threadId, runId, objective: goal.objective, evaluation });
    logger.info({ threadId, runId, verdict: judgement.verdict, action: decision.action, standDownReason: decision.standDownReason }, 'goal evaluated');
    return isCurrent && decision.action === 'continued' ? continuationMessage(goal.objective, judgement) : undefined;
  }
}

/** The turn ended with the agent's question to the user (the clarification tool's answer is last). */
function endsInClarification(messages: BaseMessage[]): boolean {
  const last = messages.at(-1);
  return last?.getType() === 'tool' && last.name === ASK_CLARIFICATION;
}
