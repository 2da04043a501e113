import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import type { Logger } from '../../src/logger.js';
import { type GitHubEvent, type GitHubTrigger, githubAgentSchema, resolveTriggers } from './bindings.js';
import type { FanOutAgent, FanOutMatch, GitHubAgentLookup } from './fanout.js';

/**
 * GitHub agents from the agents folder: `agents/<name>/config.yaml` (with a `github:` block) and
 * `agents/<name>/SOUL.md`, and the `(repo, event)` index the fan-out reads.
 */

/** Folder names as GitHub logins spell them; the name is part of thread ids and topics. */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9-]+$/;
export const AGENT_CONFIG_FILE = 'config.yaml';
export const AGENT_SOUL_FILE = 'SOUL.md';
/** The default agent's folder: it has no config.yaml and is never a GitHub agent. */
const DEFAULT_AGENT_FOLDER = 'lead';

/** An agent with a `github:` block, as loaded. */
export interface GitHubAgent extends FanOutAgent {
  description: string;
  /** `enabled` in config.yaml (default true); disabled agents load but are not indexed. */
  isEnabled: boolean;
  /** SOUL.md as written; `undefined` when the folder has none (the default SOUL applies). */
  soul: string | undefined;
}

/** A registry match: an enabled agent and its binding's resolved trigger for the event. */
export interface GitHubAgentMatch extends FanOutMatch {
  agent: GitHubAgent;
}

const optionalText = z
  .string({ error: 'must be a string' })
  .nullish()
  .transform((value) => value?.trim() || undefined);

/** Other agent keys (`model`, `tool_groups`, …) belong to the agent runtime and are not checked here. */
const agentConfigSchema = z.looseObject({
  name: optionalText.describe('The agent name; must equal its folder name when given.'),
  description: optionalText.transform((value) => value ?? '').describe('What the agent is for.'),
  enabled: z
    .boolean({ error: 'must be true or false' })
    .nullish()
    .transform((value) => value ?? true)
    .describe('False keeps the agent from being woken by GitHub. Default true.'),
  owner: z
    .union([z.string().trim().min(1, 'must not be empty'), z.number().int()], {
      error: 'must be a server user id or name',
    })
    .nullish()
    .transform((value) => (value === null || value === undefined ? undefined : String(value)))
    .describe('The server account the agent runs as; absent = the default owner.'),
  github: githubAgentSchema.nullish().describe('Repositories and events that wake the agent (reference §7.2).'),
});

/** Why one agent folder could not be used; carries no host path and no file content. */
class AgentFileError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'AgentFileError';
  }
}

/**
 * Loads every agent with a `github:` block from `<agentsDir>/<name>/config.yaml` (plus its
 * SOUL.md), disabled ones included, sorted by name. `lead/`, hidden folders, plain files and
 * folders without a config.yaml are ignored silently; agents without a `github:` block are not
 * GitHub agents. A broken agent (invalid YAML, failed validation, a `name` other than its folder,
 * two bindings for one repo, unreadable files) is skipped with one warning naming the file
 * relative to `agentsDir` and the reason. A missing `agentsDir` means no agents.
 *
 * @throws only when `agentsDir` exists but cannot be listed.
 */
export async function loadGitHubAgents(agentsDir: string, logger: Logger): Promise<GitHubAgent[]> {
  const agents: GitHubAgent[] = [];
  for (const folder of await listAgentFolders(agentsDir)) {
    try {
      const agent = await loadAgentFolder(agentsDir, folder);
      if (agent !== undefined) agents.push(agent);
    } catch (error) {
      const reason = error instanceof AgentFileError ? error.reason : `cannot be read (${fsErrorCode(error)})`;
      logger.warn({ file: `${folder}/${AGENT_CONFIG_FILE}`, reason }, 'skipped a GitHub agent whose config is invalid');
    }
  }
  return agents.sort((a, b) => a.name.localeCompare(b.name));
}

async function listAgentFolders(agentsDir: string): Promise<string[]> {
  try {
    const entries = await readdir(agentsDir);
    return entries.filter((entry) => !entry.startsWith('.') && entry !== DEFAULT_AGENT_FOLDER).sort();
  } catch (error) {
    if (fsErrorCode(error) === 'ENOENT') return [];
    throw error;
  }
}

async function loadAgentFolder(agentsDir: string, folder: string): Promise<GitHubAgent | undefined> {
  const configText = await readOptional(join(agentsDir, folder, AGENT_CONFIG_FILE));
  if (configText === undefined) return undefined;
  const config = parseAgentConfig(configText);
  if (config.github === null || config.github === undefined) return undefined;
  if (!AGENT_NAME_PATTERN.test(folder)) {
    throw new AgentFileError('the folder name must be letters, digits and hyphens (it is the agent name)');
  }
  // The folder is the agent's address (thread ids, topics); a second name would drift from it.
  if (config.name !== undefined && config.name !== folder) {
    throw new AgentFileError(`name '${config.name}' does not match its folder '${folder}'`);
  }
  return {
    name: folder,
    description: config.description,
    isEnabled: config.enabled,
    owner: config.owner,
    github: config.github,
    soul: await readOptional(join(agentsDir, folder, AGENT_SOUL_FILE)),
  };
}

function parseAgentConfig(text: string): z.output<typeof agentConfigSchema> {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new AgentFileError(describeYamlError(error));
  }
  // An empty file is YAML null: an agent with no settings, so not a GitHub agent.
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new AgentFileError('must be a YAML mapping of keys to values');
  const result = agentConfigSchema.safeParse(raw);
  if (!result.success) {
    // Paths and expectations only: zod's messages do not echo the input, so no value is logged.
    throw new AgentFileError(
      result.error.issues.map((issue) => `${issue.path.join('.') || 'config'}: ${issue.message}`).join('; '),
    );
  }
  return result.data;
}

/** The YAML library's first message line, without the excerpt of the file it appends. */
function describeYamlError(error: unknown): string {
  if (!(error instanceof YAMLParseError)) return 'not valid YAML';
  const firstLine = (error.message.split('\n', 1)[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
  const line = error.linePos?.[0]?.line;
  return `invalid YAML${line === undefined ? '' : ` at line ${line}`}: ${firstLine}`;
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = fsErrorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** The errno code only: a Node file-system message would put the host path in the log. */
function fsErrorCode(error: unknown): string {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  return code ?? 'unknown error';
}

/**
 * A cheap fingerprint of the agents folder: the folder names plus each config.yaml's and SOUL.md's
 * mtime and size. Changes whenever an agent is added, removed or edited; reads no file content.
 */
export async function agentsDirSignature(agentsDir: string): Promise<string> {
  const parts: string[] = [];
  for (const folder of await listAgentFolders(agentsDir)) {
    parts.push(folder);
    for (const file of [AGENT_CONFIG_FILE, AGENT_SOUL_FILE]) {
      try {
        const info = await stat(join(agentsDir, folder, file));
        parts.push(`${file}:${info.mtimeMs}:${info.size}`);
      } catch {
        parts.push(`${file}:-`);
      }
    }
  }
  return parts.join('\n');
}

export interface GitHubAgentRegistryOptions {
  /** Host folder holding `<name>/config.yaml`; it need not exist. */
  agentsDir: string;
  logger: Logger;
  /** Milliseconds clock for the reload throttle. Default `Date.now`. */
  now?: () => number;
}

/** `reloadIfChanged` stats the folder at most this often; calls in between are free. */
const MIN_CHECK_INTERVAL_MS = 1000;

function indexKey(repo: string, event: string): string {
  return `${repo.toLowerCase()}\n${event}`;
}

/**
 * The GitHub agents and their `(repo, event)` index (reference §7.2 "Registry"). Only enabled
 * agents are indexed, and only for the events their binding lists. Read with `matches`; refresh
 * with `reloadIfChanged` before each delivery.
 */
export class GitHubAgentRegistry implements GitHubAgentLookup {
  private agentList: GitHubAgent[] = [];
  private index = new Map<string, GitHubAgentMatch[]>();
  private signature = '';
  private lastCheckMs = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;

  private constructor(private readonly options: GitHubAgentRegistryOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Scans the agents folder (see {@link loadGitHubAgents}: broken agents are skipped with a
   * warning) and indexes it.
   *
   * @throws when the agents folder exists but cannot be listed.
   */
  static async load(options: GitHubAgentRegistryOptions): Promise<GitHubAgentRegistry> {
    const registry = new GitHubAgentRegistry(options);
    await registry.rescan();
    return registry;
  }

  /** Every loaded GitHub agent, disabled ones included, sorted by name. */
  agents(): readonly GitHubAgent[] {
    return this.agentList;
  }

  /** Enabled agents bound to `repo` (case-insensitive) whose binding lists `event`, by agent name. */
  matches(repo: string, event: string): readonly GitHubAgentMatch[] {
    return this.index.get(indexKey(repo, event)) ?? [];
  }

  /**
   * Rescans when a config.yaml or SOUL.md changed (mtime or size) or an agent folder appeared or
   * went away. Checks at most once per second; a call within a second of the last check returns
   * false without touching the disk. Resolves true when it rescanned.
   *
   * @throws when the agents folder exists but cannot be listed; the previous index stays.
   */
  async reloadIfChanged(): Promise<boolean> {
    const nowMs = this.now();
    if (nowMs - this.lastCheckMs < MIN_CHECK_INTERVAL_MS) return false;
    this.lastCheckMs = nowMs;
    const signature = await agentsDirSignature(this.options.agentsDir);
    if (signature === this.signature) return false;
    await this.rescan(signature);
    return true;
  }

  private async rescan(signature?: string): Promise<void> {
    const { agentsDir, logger } = this.options;
    // Signature first: an edit landing during the scan then shows up as a change next time.
    const before = signature ?? (await agentsDirSignature(agentsDir));
    const agents = await loadGitHubAgents(agentsDir, logger);
    this.agentList = agents;
    this.index = buildIndex(agents);
    this.signature = before;
    this.lastCheckMs = this.now();
    logger.info(
      { agents: agents.map((agent) => agent.name), enabled: agents.filter((agent) => agent.isEnabled).length },
      'GitHub agents loaded',
    );
  }
}

function buildIndex(agents: readonly GitHubAgent[]): Map<string, GitHubAgentMatch[]> {
  const index = new Map<string, GitHubAgentMatch[]>();
  for (const agent of agents) {
    if (!agent.isEnabled) continue;
    for (const binding of agent.github.bindings) {
      const triggers = resolveTriggers(binding);
      for (const [event, trigger] of Object.entries(triggers) as [GitHubEvent, GitHubTrigger][]) {
        const key = indexKey(binding.repo, event);
        const list = index.get(key) ?? [];
        list.push({ agent, trigger });
        index.set(key, list);
      }
    }
  }
  return index;
}
