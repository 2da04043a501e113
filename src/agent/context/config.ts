import { z } from 'zod';

/**
 * `summarization:` section: how a conversation whose history nears its model's context window
 * (`models[].context_window`) is kept within it. Composed into the root config schema by
 * `src/config/`; every field has a default.
 */
export const summarizationConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe(
        'Fold older turns into a running summary when a conversation nears the context window of its model. Only models that set context_window are summarised.',
      ),
    model_name: z
      .string()
      .min(1)
      .optional()
      .describe('Name of a configured model (models[].name) that writes the summaries; absent, or when it fails: the run’s own model.'),
    answer_reserve: z
      .number()
      .gt(0)
      .lt(1)
      .default(0.25)
      .describe('Share of the context window left for the answer; the prompt and history are kept within the rest (the budget).'),
    keep_recent: z
      .number()
      .gt(0)
      .lt(1)
      .default(0.5)
      .describe('Share of the budget left by the prompt and the summary that the newest whole turns may fill verbatim after a fold; older turns are folded into the summary.'),
  })
  .prefault({});

export type SummarizationConfig = z.infer<typeof summarizationConfigSchema>;
