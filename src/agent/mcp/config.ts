import { z } from 'zod';

/**
 * A server's name: the prefix of its tools' names (`<server>__<tool>`), so it keeps to what
 * every model provider accepts in a tool name, and never holds the separator itself.
 */
export const MCP_SERVER_NAME = /^[a-z][a-z0-9-]{0,23}$/;

const mcpServerSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    command: z.string().min(1).optional().describe('stdio: the program that runs the server, e.g. npx or /usr/local/bin/docs-mcp.'),
    args: z.array(z.string()).default([]).describe('stdio: its arguments.'),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string())
      .default({})
      .describe(
        'stdio: variables the program gets, e.g. { DOCS_TOKEN: $DOCS_TOKEN }. Besides these it sees only PATH, HOME, USER, LOGNAME, SHELL and TERM: never the server’s own secrets.',
      ),
    cwd: z.string().min(1).optional().describe('stdio: its working directory; absent: the server’s.'),
    url: z.url({ protocol: /^https?$/ }).optional().describe('Streamable HTTP: the address of the server’s MCP endpoint.'),
    headers: z
      .record(z.string(), z.string())
      .default({})
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own ${NAME} syntax, shown as written.
      .describe('Streamable HTTP: headers sent with every request, e.g. { Authorization: "Bearer ${DOCS_TOKEN}" }.'),
    access: z
      .enum(['trusted', 'everyone'])
      .default('trusted')
      .describe(
        'Whose runs get its tools: trusted = the operator, chat users in allowed_users and users bound to an account (as bash_access: trusted); everyone = every chat user. The tools act with the credentials given here.',
      ),
    connect_timeout_seconds: z.number().positive().max(300).default(30).describe('How long starting and greeting the server may take.'),
    tool_timeout_seconds: z.number().positive().max(3600).default(60).describe('How long one tool call may take.'),
    max_output_chars: z.number().int().min(100).default(20_000).describe('Characters of one tool result the agent reads at most.'),
  })
  .refine((server) => (server.command === undefined) !== (server.url === undefined), {
    message: 'give either command (a stdio server) or url (a streamable HTTP server), not both',
  });

/**
 * `mcp_servers:` section: Model Context Protocol servers whose tools the agent is offered, keyed
 * by name. Composed into the root config schema by `src/config/`.
 */
export const mcpServersConfigSchema = z
  .record(
    z.string().regex(MCP_SERVER_NAME, 'a server name is a lowercase letter, then up to 23 lowercase letters, digits and hyphens'),
    mcpServerSchema,
  )
  .default({});

export type McpServerConfig = z.infer<typeof mcpServerSchema>;
export type McpServersConfig = z.infer<typeof mcpServersConfigSchema>;
