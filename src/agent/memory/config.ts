import { z } from 'zod';

/**
 * `memory:` section. Restart-required: the queue, updater and injection are built once with
 * these values. Composed into the root config schema by `src/config/`; every field has a default.
 */
export const memoryConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe('Learn from conversations: after a run, the conversation is queued for fact extraction.'),
    injection_enabled: z
      .boolean()
      .default(true)
      .describe("Add the user's stored memory to the system prompt as a <memory> block."),
    debounce_seconds: z
      .number()
      .min(0)
      .default(30)
      .describe(
        'Quiet time after the last message of a thread before its memory update runs; a newer message restarts the wait.',
      ),
    model_name: z
      .string()
      .min(1)
      .optional()
      .describe('Name of a configured model (models[].name) used for extraction; absent means the run’s own model.'),
    max_facts: z
      .number()
      .int()
      .positive()
      .default(100)
      .describe('Most facts kept per user; beyond it the lowest-confidence (then oldest) facts are dropped.'),
    fact_confidence_threshold: z
      .number()
      .min(0)
      .max(1)
      .default(0.7)
      .describe('Facts the model rates below this confidence (0..1) are never stored.'),
    max_injection_tokens: z
      .number()
      .int()
      .positive()
      .default(2000)
      .describe('Estimated token budget of the injected <memory> block; lower-confidence facts are left out first.'),
  })
  .prefault({});

export type MemoryConfig = z.infer<typeof memoryConfigSchema>;
