import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { agentFolderNames } from './catalog.js';
import { DEFAULT_AGENT_NAME } from './prompt.js';

/** One repository an agent is bound to, and the webhook events that wake it there. */
export interface AgentBindingOverview {
  repo: string;
  events: string[];
}

/** What the operator's agents page shows of one agent. */
export interface AgentOverview {
  name: string;
  /** `description` of config.yaml, else the first sentence of SOUL.md; '' when neither has one. */
  description: string;
  /** `model` of config.yaml; null: the run's model (the first configured, or the one the chat chose). */
  model: string | null;
  /** `skills` of config.yaml; null: every enabled skill. */
  skills: string[] | null;
  /** `mcp_tools` (and `tool_groups`) of config.yaml; null: every tool. */
  tools: string[] | null;
  /** `enabled` of config.yaml (default true): false keeps GitHub from waking it. */
  isEnabled: boolean;
  /** People may choose it in chat with `/agent` (`chat: { enabled: true }`). */
  isInChat: boolean;
  /** The `github:` block's bindings; [] when it has none. */
  bindings: AgentBindingOverview[];
  /** Why config.yaml could not be read as an agent's (the agent is then not used); null when it is fine. */
  problem: string | null;
}

const names = z.array(z.string()).nullish().catch(undefined);

/**
 * The keys of config.yaml this view reads, loosely: a key of the wrong shape is left out here
 * (the modules that use it report it), so one odd key does not hide the agent from the operator.
 */
const overviewSchema = z.looseObject({
  description: z.string().nullish().catch(undefined),
  model: z.string().nullish().catch(undefined),
  enabled: z.boolean().nullish().catch(undefined),
  skills: names,
  mcp_tools: names,
  tool_groups: names,
  chat: z.looseObject({ enabled: z.boolean().nullish().catch(undefined) }).nullish().catch(undefined),
  github: z
    .looseObject({
      bindings: z
        .array(z.looseObject({ repo: z.string().nullish().catch(undefined), triggers: z.record(z.string(), z.unknown()).nullish().catch(undefined) }))
        .nullish()
        .catch(undefined),
    })
    .nullish()
    .catch(undefined),
});

/** Longest description taken from a SOUL.md, in characters. */
const MAX_DESCRIPTION_CHARS = 200;

/**
 * What a SOUL.md says first: its first paragraph of text (headings skipped), up to the end of its
 * first sentence, at most {@link MAX_DESCRIPTION_CHARS} characters.
 */
export function firstLineOf(soul: string): string {
  const lines: string[] = [];
  for (const line of soul.split('\n')) {
    const text = line.trim();
    if (text.startsWith('#')) {
      if (lines.length > 0) break;
      continue;
    }
    if (text === '') {
      if (lines.length > 0) break;
      continue;
    }
    lines.push(text);
  }
  const paragraph = lines.join(' ');
  const sentenceEnd = /[.!?](?=\s|$)/.exec(paragraph);
  const sentence = sentenceEnd === null ? paragraph : paragraph.slice(0, sentenceEnd.index + 1);
  return sentence.length > MAX_DESCRIPTION_CHARS ? `${sentence.slice(0, MAX_DESCRIPTION_CHARS - 1).trimEnd()}…` : sentence;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

async function overviewOf(agentsDir: string, name: string, fallbackSoul: () => Promise<string | undefined>): Promise<AgentOverview> {
  const [configText, ownSoul] = await Promise.all([readOptional(join(agentsDir, name, 'config.yaml')), readOptional(join(agentsDir, name, 'SOUL.md'))]);
  const soul = ownSoul ?? (name === DEFAULT_AGENT_NAME ? await fallbackSoul() : undefined);
  const overview: AgentOverview = {
    name,
    description: firstLineOf(soul ?? ''),
    model: null,
    skills: null,
    tools: null,
    isEnabled: true,
    isInChat: name === DEFAULT_AGENT_NAME,
    bindings: [],
    problem: null,
  };
  if (configText === undefined) return overview;
  let raw: unknown;
  try {
    raw = parseYaml(configText) ?? {};
  } catch {
    return { ...overview, problem: 'config.yaml is not valid YAML' };
  }
  const parsed = overviewSchema.safeParse(raw);
  if (!parsed.success) return { ...overview, problem: 'config.yaml is not a mapping of settings' };
  const config = parsed.data;
  const tools = [...(config.mcp_tools ?? []), ...(config.tool_groups ?? [])];
  return {
    ...overview,
    description: config.description?.trim() || overview.description,
    model: config.model?.trim() || null,
    skills: config.skills ?? null,
    tools: config.mcp_tools == null && config.tool_groups == null ? null : tools,
    isEnabled: config.enabled ?? true,
    isInChat: overview.isInChat || config.chat?.enabled === true,
    bindings: (config.github?.bindings ?? []).flatMap((binding) =>
      typeof binding.repo === 'string' ? [{ repo: binding.repo.trim(), events: Object.keys(binding.triggers ?? {}).sort() }] : [],
    ),
  };
}

/**
 * Every agent of the agents folder as the operator's agents page shows it (`GET /api/agents`), the
 * default agent first, then by name. Read at each call, so an agent made a moment ago is there.
 * A folder whose name is not an agent name is left out; a config.yaml that cannot be read as YAML
 * is shown with its `problem`. Only what the operator wrote: no secrets are read from elsewhere.
 *
 * @param defaultSoulPath the SOUL.md the default agent uses when the folder has none of its own.
 */
export async function listAgentOverviews(agentsDir: string, defaultSoulPath?: string): Promise<AgentOverview[]> {
  const agentNames = new Set(await agentFolderNames(agentsDir));
  agentNames.add(DEFAULT_AGENT_NAME);
  const fallbackSoul = async () => (defaultSoulPath === undefined ? undefined : readOptional(defaultSoulPath));
  const overviews = await Promise.all([...agentNames].map((name) => overviewOf(agentsDir, name, fallbackSoul)));
  return overviews.sort((a, b) => (a.name === DEFAULT_AGENT_NAME ? -1 : b.name === DEFAULT_AGENT_NAME ? 1 : a.name.localeCompare(b.name)));
}
