import { tool } from '@langchain/core/tools';
import { z } from 'zod';

/** The tool's name; the manager recognises its message as "the agent asked a question". */
export const ASK_CLARIFICATION = 'ask_clarification';

const CLARIFICATION_TYPES = ['missing_info', 'ambiguous_requirement', 'approach_choice', 'risk_confirmation', 'suggestion'] as const;

/**
 * `ask_clarification`: ends the turn and shows the question to the user; their next message
 * answers it (reference §4.7, "pending clarification"). `returnDirect` makes the ReAct loop stop
 * after this tool, so the question is the last message of the turn and the model never answers
 * its own question.
 */
export function createClarificationTool() {
  return tool(
    async ({ question, context, options }) => {
      const lines = [context?.trim(), question.trim()].filter((line): line is string => Boolean(line));
      const choices = (options ?? []).map((option) => option.trim()).filter(Boolean);
      if (choices.length > 0) lines.push(choices.map((option, i) => `${i + 1}. ${option}`).join('\n'));
      return lines.join('\n\n');
    },
    {
      name: ASK_CLARIFICATION,
      description:
        'Ask the user a question and stop until they answer. Use it when the request is missing information, is ambiguous, has several reasonable approaches the user should choose from, or is risky enough to need confirmation. Do not guess instead of asking.',
      schema: z.object({
        question: z.string().min(1).describe('The question, in the language the user writes in.'),
        clarification_type: z.enum(CLARIFICATION_TYPES).describe('Why you are asking.'),
        context: z.string().optional().describe('One or two sentences of background the user needs to answer.'),
        options: z.array(z.string()).optional().describe('Choices to offer, when there are a few clear ones.'),
      }),
      returnDirect: true,
    },
  );
}
