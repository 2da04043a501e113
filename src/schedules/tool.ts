import type { RunnableConfig } from '@langchain/core/runnables';
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { z } from 'zod';
import type { ScheduleBook } from './book.js';
import { createdText } from './messages.js';
import { SCHEDULE_ORIGIN_KEY, type ScheduleOrigin } from './types.js';
import { MAX_TASK_CHARS } from './when.js';

export const SCHEDULE_TASK = 'schedule_task';

const originSchema = z.looseObject({
  channel: z.string().min(1),
  chatId: z.string().min(1),
  userId: z.string().min(1),
  isPrivateChat: z.boolean(),
});

/** What the tool writes for the model; the person reads the agent's answer, not these. */
const TOOL_TEXTS = {
  noChat: 'Error: this conversation has no chat to post scheduled results into; ask the person to use /schedule in a chat.',
  tooMany: (max: number) => `Error: the person has ${max} schedules already, the most allowed; they can cancel one with /schedule cancel <id>.`,
  refused: (reason: string) => `Error: ${reason}`,
} as const;

/**
 * `schedule_task`, offered in chat turns: the agent makes a schedule for the person, exactly as
 * `/schedule <when> <task>` would (same phrases, limits and owner), answering into the chat the
 * turn came from. Which chat that is comes from the server (the run's `configurable`), never from
 * the model's arguments.
 */
export function createScheduleTaskTool(book: ScheduleBook): StructuredToolInterface {
  return tool(
    async ({ when, task }, config?: RunnableConfig) => {
      const ownerUserId = config?.configurable?.user_id;
      const origin = originSchema.safeParse(config?.configurable?.[SCHEDULE_ORIGIN_KEY]);
      if (typeof ownerUserId !== 'string' || ownerUserId === '' || !origin.success) return TOOL_TEXTS.noChat;
      const made = await book.create({ ownerUserId, origin: origin.data as ScheduleOrigin, when, task });
      if (made.ok) return createdText(made.schedule);
      if (made.reason === 'too_many') return TOOL_TEXTS.tooMany(book.maxPerUser);
      if (made.reason === 'refused') return TOOL_TEXTS.refused(made.message);
      return TOOL_TEXTS.noChat;
    },
    {
      name: SCHEDULE_TASK,
      description:
        'Schedule a task to run later or repeatedly; each run is done by you on your own and its result is posted into this chat. ' +
        'Use it when the person asks for a reminder or recurring work ("remind me on Friday at 10 to…", "every weekday at 9 summarise…"). ' +
        'Tell the person the schedule id and next run from the result; they manage schedules with /schedule list and /schedule cancel <id>.',
      schema: z.object({
        when: z
          .string()
          .min(1)
          .max(200)
          .describe('When, in these words: "every weekday 09:00", "every monday 9am", "every 2h", "in 30m", "tomorrow 8:30", "at 17:00", "on friday 10:00", "on 2026-12-24 18:00", or a cron expression in double quotes like "\\"0 9 * * 1-5\\"".'),
        task: z.string().min(1).max(MAX_TASK_CHARS).describe('What to do at each run, written as the instruction you will then follow, e.g. "Summarise the open pull requests of acme/web".'),
      }),
    },
  );
}
