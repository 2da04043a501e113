import { z } from 'zod';

/**
 * Who may run shell commands on the host: `trusted` (default) = gateway callers and chat users
 * the channel allow-lists or who bound their account; `everyone` = also anyone who can message
 * the bot; `nobody` = never. The file tools are always available: they cannot leave the thread's
 * folders, while bash runs as the server's own OS user.
 */
export const bashAccessSchema = z.enum(['trusted', 'everyone', 'nobody']);
export type BashAccess = z.infer<typeof bashAccessSchema>;


/**
 * `sandbox:` section. Restart-required: tools are built once with these values.
 * Composed into the root config schema by `src/config/`; every field has a default.
 */
export const sandboxConfigSchema = z
  .strictObject({
    bash_access: bashAccessSchema.default('trusted').describe('Who may run shell commands on the host: trusted, everyone or nobody.'),
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
