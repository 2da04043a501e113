import { z } from 'zod';
import { MAX_CONTINUATIONS } from './objective.js';

/**
 * `goals:` section. Composed into the root config schema by `src/config/`; every field has a
 * default. `evaluator_model` must name an entry of `models:`; that cross-check belongs to the
 * root schema, which sees both sections.
 */
export const goalsConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .default(true)
      .describe('Evaluate active thread goals after each visible agent turn; false ignores goals entirely.'),
    evaluator_model: z
      .string()
      .min(1)
      .optional()
      .describe('Name of a configured model that judges goals; absent means the model of the run being judged.'),
    max_continuations: z
      .number()
      .int()
      .min(0)
      .max(MAX_CONTINUATIONS)
      .default(MAX_CONTINUATIONS)
      .describe(
        `Server-wide ceiling on hidden continuations after one visible user turn (0..${MAX_CONTINUATIONS}); a goal's own limit can only lower it. 0 evaluates without ever continuing.`,
      ),
  })
  .prefault({});

export type GoalsConfig = z.infer<typeof goalsConfigSchema>;
