import { z } from 'zod';

/**
 * Who may run shell commands: `trusted` (default) = gateway callers and chat users the channel
 * allow-lists or who bound their account; `everyone` = also anyone who can message the bot;
 * `nobody` = never. The file tools are always available: they cannot leave the thread's folders.
 * What a shell can reach depends on `sandbox.isolation` (docs/security.md).
 */
export const bashAccessSchema = z.enum(['trusted', 'everyone', 'nobody']);
export type BashAccess = z.infer<typeof bashAccessSchema>;

/**
 * How the agent's processes are isolated: `auto` (default) = bubblewrap when a probe at start
 * succeeds, else none (said at start and in `/health`); `bubblewrap` = required, the start fails
 * without it; `none` = unsandboxed by choice (shells run as the server's OS user with the host,
 * other accounts and the server's files in reach).
 */
export const sandboxIsolationSchema = z.enum(['auto', 'bubblewrap', 'none']);
export type SandboxIsolationSetting = z.infer<typeof sandboxIsolationSchema>;

/**
 * `sandbox:` section. Restart-required: tools are built once with these values.
 * Composed into the root config schema by `src/config/`; every field has a default.
 */
export const sandboxConfigSchema = z
  .strictObject({
    bash_access: bashAccessSchema.default('trusted').describe('Who may run shell commands: trusted, everyone or nobody.'),
    isolation: sandboxIsolationSchema
      .default('auto')
      .describe(
        'auto: bubblewrap when available, else unsandboxed (warned at start, shown in /health); bubblewrap: required, the start fails without it; none: unsandboxed by choice.',
      ),
    network: z
      .boolean()
      .default(true)
      .describe(
        'Whether sandboxed shells reach the network (the host\'s, including its 127.0.0.1 services). False: loopback of their own only. An agent\'s config.yaml can override it (sandbox.network).',
      ),
    pass_env: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'))
      .default([])
      .describe(
        "Names of the server's environment variables shells get besides PATH, LANG, LC_ALL, LC_CTYPE, TZ and TERM (e.g. HTTPS_PROXY, SSL_CERT_FILE). Never list a secret: the shell can print it.",
      ),
    read_only_paths: z
      .array(z.string().startsWith('/', 'must be an absolute path'))
      .default([])
      .describe(
        'Host files or folders shown read-only at the same path inside the sandbox (e.g. a CA bundle SSL_CERT_FILE names); missing ones are skipped. Never list secrets.',
      ),
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
