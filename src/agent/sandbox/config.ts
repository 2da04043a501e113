import { z } from 'zod';

/**
 * `sandbox:` section. Restart-required: tools are built once with these values.
 * Composed into the root config schema by `src/config/`; every field has a default.
 */
export const sandboxConfigSchema = z
  .strictObject({
    bash_timeout_seconds: z
      .number()
      .positive()
      .default(600)
      .describe('Wall-clock limit for one bash call; on expiry its whole process group is killed.'),
    max_output_chars: z
      .number()
      .int()
      .positive()
      .default(20_000)
      .describe('Most characters of bash output returned to the model; head and tail are kept.'),
    max_read_chars: z
      .number()
      .int()
      .positive()
      .default(100_000)
      .describe('Most characters read_file returns; longer content is cut with a note.'),
  })
  .prefault({});

export type SandboxConfig = z.infer<typeof sandboxConfigSchema>;
