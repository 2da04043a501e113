import { AppError } from '../../errors.js';

/** Longest objective a thread goal may have, in characters (Unicode code points), after normalizing. */
export const MAX_OBJECTIVE_CHARS = 4000;
/** Hard ceiling on hidden continuations after one visible user turn; larger requests are refused. */
export const MAX_CONTINUATIONS = 8;

/**
 * Trims the objective and collapses every run of whitespace (newlines included) into one space,
 * so the goal reads as one line in `/goal` replies and evaluator prompts.
 *
 * @throws AppError `UNPROCESSABLE` (422) when nothing is left, or when the result is longer than
 *   {@link MAX_OBJECTIVE_CHARS}; its `userMessage` says which.
 */
export function normalizeObjective(text: string): string {
  const normalized = text.trim().replace(/\s+/g, ' ');
  if (normalized === '') {
    throw new AppError('UNPROCESSABLE', 'goal objective is empty', {
      status: 422,
      userMessage: 'The goal objective must not be empty.',
    });
  }
  // Code points, not UTF-16 units: an emoji counts as one character, as a user would count it.
  const length = [...normalized].length;
  if (length > MAX_OBJECTIVE_CHARS) {
    throw new AppError('UNPROCESSABLE', `goal objective has ${length} characters, over ${MAX_OBJECTIVE_CHARS}`, {
      status: 422,
      userMessage: `The goal objective must be at most ${MAX_OBJECTIVE_CHARS} characters.`,
    });
  }
  return normalized;
}

/**
 * Returns `count` when it is a whole number from 0 to {@link MAX_CONTINUATIONS}.
 *
 * @throws AppError `UNPROCESSABLE` (422) for anything else (negative, fractional, over the cap).
 *   Refused rather than clamped, so an API caller learns the limit instead of silently getting less.
 */
export function checkMaxContinuations(count: number): number {
  if (!Number.isInteger(count) || count < 0 || count > MAX_CONTINUATIONS) {
    throw new AppError('UNPROCESSABLE', `max_continuations ${count} is outside 0..${MAX_CONTINUATIONS}`, {
      status: 422,
      userMessage: `max_continuations must be a whole number from 0 to ${MAX_CONTINUATIONS}.`,
    });
  }
  return count;
}
