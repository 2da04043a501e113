import { statSync } from 'node:fs';
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

/** The last settings read from each file, with the file's identity then: edits are seen at the next run. */
const settingsCache = new Map<string, { stamp: string; settings: AgentSettings }>();

/**
 * Reads what a run of agent `name` needs from `<agentsDir>/<name>/config.yaml`. A missing file
 * or key means no override. `name` must already be a valid agent name (letters, digits, hyphens).
 * Every run asks, so an edit takes effect at the next run; the file is read again only when its
 * size or times changed (a run paid about a millisecond reading it, most often to learn it is missing).
 *
 * @throws ConfigError naming the file (relative to the agents folder) and key when the file is
 *   not valid YAML or a block is invalid: a run must not fall back to the network or the tools
 *   the agent was configured without.
 */
export async function loadAgentSettings(agentsDir: string, name: string): Promise<AgentSettings> {
  const path = join(agentsDir, name, 'config.yaml');
  const stamp = fileStamp(path);
  const cached = settingsCache.get(path);
  if (stamp !== undefined && cached?.stamp === stamp) return cached.settings;
  const settings = await readAgentSettings(path, `agents/${name}/config.yaml`);
  if (stamp !== undefined) settingsCache.set(path, { stamp, settings });
  return settings;
}

/** The file's identity and version (`missing` when absent); undefined when it cannot be told, so it is read. */
function fileStamp(path: string): string | undefined {
  try {
    // A stat that does not throw for a missing file: a small fraction of the open, read and parse it saves.
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats === undefined ? 'missing' : `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
  } catch {
    return undefined;
  }
}

async function readAgentSettings(path: string, file: string): Promise<AgentSettings> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
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
