/**
 * Thread goals: a thread may carry one objective that an evaluator model judges after each
 * visible agent turn, continuing with hidden messages until it is met or the loop stands down.
 * The runtime loop that drives these pieces lives with the runtime.
 */
export type { GoalAction, GoalEvaluation, GoalVerdict } from '../../db/schema/index.js';
export { type GoalsConfig, goalsConfigSchema } from './config.js';
export { type DriveGoalOptions, driveGoal } from './driver.js';
export {
  type EvaluateGoalOptions,
  evaluateGoal,
  type GoalJudgement,
  latestVisibleAssistantText,
  MAX_TRANSCRIPT_CHARS,
  visibleTranscript,
} from './evaluator.js';
export {
  continuationMessage,
  decide,
  type GoalDecision,
  type GoalDecisionInput,
  GoalProgress,
  NO_PROGRESS_LIMIT,
  toGoalEvaluation,
} from './loop.js';
export { checkMaxContinuations, MAX_CONTINUATIONS, MAX_OBJECTIVE_CHARS, normalizeObjective } from './objective.js';
export {
  type Goal,
  type GoalEvaluationRecord,
  type GoalJson,
  GoalStore,
  goalJsonSchema,
  type RecordEvaluationInput,
  toGoalJson,
} from './store.js';
