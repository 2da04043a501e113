import { AppError } from '../../errors.js';
import { MESSAGES } from '../messages.js';
import type { Command } from './types.js';

const CLEAR_WORDS = new Set(['clear', 'reset', 'off']);

/**
 * `/goal` shows the goal, `/goal clear|reset|off` clears it, `/goal <objective>` sets it and runs
 * the objective as a chat turn (reference §5.2). The agent keeps working toward it after each
 * turn until an evaluator judges it met.
 */
export const goalCommand: Command = {
  name: 'goal',
  usage: '/goal [condition|clear]',
  description: 'Set, show, or clear an active goal',
  async run({ message, args, threads, runtime }) {
    if (args === '') {
      const threadId = await threads.find(message);
      if (!threadId) return { reply: MESSAGES.noGoal };
      const goal = await runtime.getGoal(threadId).catch(() => undefined);
      if (goal === undefined) return { reply: MESSAGES.goalFetchFailed };
      return { reply: goal ? MESSAGES.goal(goal.objective) : MESSAGES.noGoal };
    }
    if (CLEAR_WORDS.has(args.toLowerCase())) {
      const threadId = await threads.find(message);
      if (threadId) {
        const cleared = await runtime.clearGoal(threadId).then(
          () => true,
          () => false,
        );
        if (!cleared) return { reply: MESSAGES.goalClearFailed };
      }
      return { reply: MESSAGES.goalCleared };
    }
    const threadId = await threads.resolve(message);
    try {
      await runtime.setGoal(threadId, { objective: args });
      return { runAsChat: { text: args } };
    } catch (error) {
      // Too long or empty after normalising: say why; anything else is the reference's reply.
      if (error instanceof AppError && error.status === 422 && error.userMessage) return { reply: error.userMessage };
      if (error instanceof AppError && error.code === 'CONFLICT' && error.userMessage) return { reply: error.userMessage };
      return { reply: MESSAGES.goalSetFailed };
    }
  },
};
