import { z } from 'zod';

/**
 * `subagents:` section: the `task` tool, with which the agent hands a self-contained job to a
 * helper (a sub-agent with its own conversation and the run's tools). Composed into the root
 * config schema by `src/config/`.
 */
export const subagentsConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('Gives the agent the task tool.'),
    max_concurrent: z.number().int().min(1).max(3).default(3).describe('Helpers of one run working at once; more wait for a free one.'),
    max_steps: z.number().int().min(5).max(200).default(50).describe('Steps (model calls and tool rounds) one helper may take.'),
    timeout_seconds: z.number().positive().max(3600).default(900).describe('How long one helper may work.'),
  })
  .prefault({});

export type SubagentsConfig = z.infer<typeof subagentsConfigSchema>;
