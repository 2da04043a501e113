import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { isFsError } from './sandbox/paths.js';

/** An agent's own sandbox settings: the `sandbox:` block of `agents/<name>/config.yaml`. */
export const agentSandboxSchema = z.strictObject({
  network: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe("Whether this agent's shells reach the network; absent = the server's sandbox.network."),
});

export type AgentSandboxSettings = z.infer<typeof agentSandboxSchema>;

/**
 * Which MCP tools an agent is offered: server names (all of that server's tools) or prefixed
 * tool names (`<server>__<tool>`). Absent: every configured server's tools.
 */
const mcpToolsSchema = z.array(z.string().min(1, 'must not be empty'), { error: 'must be a list of MCP server or tool names' });

/**
 * The keys of `agents/<name>/config.yaml` the runtime reads for a run. Other keys (`github:`,
 * `owner`, …) belong to other modules and are not checked here.
 */
const agentFileSchema = z.looseObject({ sandbox: agentSandboxSchema.nullish(), mcp_tools: mcpToolsSchema.nullish() });

export interface AgentSettings {
  sandbox: AgentSandboxSettings;
  /** The agent's MCP allow-list (`mcp_tools:`); undefined: every server's tools. */
  mcpTools?: readonly string[];
}

/**
 * Reads what a run of agent `name` needs from `<agentsDir>/<name>/config.yaml`. A missing file
 * or key means no override. `name` must already be a valid agent name (letters, digits, hyphens).
 *
 * @throws ConfigError naming the file (relative to the agents folder) and key when the file is
 *   not valid YAML or a block is invalid: a run must not fall back to the network or the tools
 *   the agent was configured without.
 */
export async function loadAgentSettings(agentsDir: string, name: string): Promise<AgentSettings> {
  const file = `agents/${name}/config.yaml`;
  let text: string;
  try {
    text = await readFile(join(agentsDir, name, 'config.yaml'), 'utf8');
  } catch (error) {
    if (isFsError(error, 'ENOENT') || isFsError(error, 'ENOTDIR')) return { sandbox: {} };
    throw new ConfigError([`${file}: cannot be read`], { cause: error });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError([`${file}: not valid YAML`], { cause: error });
  }
  if (raw === null || raw === undefined) return { sandbox: {} };
  const result = agentFileSchema.safeParse(raw);
  if (!result.success) {
    // Paths and expectations only: zod's messages do not echo the input.
    throw new ConfigError(result.error.issues.map((issue) => `${file}: ${issue.path.join('.') || 'config'}: ${issue.message}`));
  }
  const { sandbox, mcp_tools: mcpTools } = result.data;
  return { sandbox: sandbox ?? {}, ...(mcpTools == null ? {} : { mcpTools }) };
}
