import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../../errors.js';
import { isFsError } from './paths.js';

/**
 * An agent's own sandbox settings: the `sandbox:` block of `agents/<name>/config.yaml`. Other
 * keys of that file (`github:`, `owner`, …) belong to other modules and are not checked here.
 */
export const agentSandboxSchema = z.strictObject({
  network: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe("Whether this agent's shells reach the network; absent = the server's sandbox.network."),
});

export type AgentSandboxSettings = z.infer<typeof agentSandboxSchema>;

const agentFileSchema = z.looseObject({ sandbox: agentSandboxSchema.nullish() });

/**
 * Reads `sandbox:` from `<agentsDir>/<name>/config.yaml`. A missing file or block means no
 * override (`{}`). `name` must already be a valid agent name (letters, digits, hyphens).
 *
 * @throws ConfigError naming the file (relative to the agents folder) and key when the file is
 *   not valid YAML or the block is invalid: a run must not fall back to the network the agent
 *   asked to be without.
 */
export async function loadAgentSandboxSettings(agentsDir: string, name: string): Promise<AgentSandboxSettings> {
  const file = `agents/${name}/config.yaml`;
  let text: string;
  try {
    text = await readFile(join(agentsDir, name, 'config.yaml'), 'utf8');
  } catch (error) {
    if (isFsError(error, 'ENOENT') || isFsError(error, 'ENOTDIR')) return {};
    throw new ConfigError([`${file}: cannot be read`], { cause: error });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError([`${file}: not valid YAML`], { cause: error });
  }
  if (raw === null || raw === undefined) return {};
  const result = agentFileSchema.safeParse(raw);
  if (!result.success) {
    // Paths and expectations only: zod's messages do not echo the input.
    throw new ConfigError(result.error.issues.map((issue) => `${file}: ${issue.path.join('.') || 'config'}: ${issue.message}`));
  }
  return result.data.sandbox ?? {};
}
