import type { StructuredToolInterface } from '@langchain/core/tools';
import type { Config } from '../config/index.js';
import type { Database } from '../db/index.js';
import type { Logger } from '../logger.js';
import { GoalStore, type GoalsConfig } from './goals/index.js';
import type { CompletedRun, PromptSources } from './lead-agent.js';
import { McpServers } from './mcp/servers.js';
import { conversationForMemory, formatMemoryForPrompt, MemoryQueue, MemoryStore, MemoryUpdater } from './memory/index.js';
import { ChatModels } from './models.js';
import { hiddenEntries, probeBubblewrap, resolveIsolation, type SandboxIsolation, sandboxUserFor, systemLayout } from './sandbox/bubblewrap.js';
import { createContextResolver } from './sandbox/context.js';
import { SandboxPaths } from './sandbox/paths.js';
import { type BubblewrapSetup, createImageReader, createSandboxTools } from './sandbox/tools.js';
import { formatActiveSkill, formatAvailableSkills, resolveSlashSkill, SkillRegistry, type SlashSkillResolution } from './skills/index.js';
import type { ImageReader } from './vision/shown-images.js';
import { createWebTools } from './web/tools.js';

export interface AgentServicesOptions {
  config: Config;
  db: Database;
  /** Absolute; user files live under `<dataDir>/users/`. */
  dataDir: string;
  /** Absolute; holds `public/` and `custom/`. */
  skillsDir: string;
  /** The server's environment: only allow-listed names reach bash; its PATH finds `bwrap`. */
  environment: Record<string, string | undefined>;
  logger: Logger;
  /**
   * Host paths a sandboxed shell must not see besides `dataDir` (the config file, the
   * repository): masked when a mounted system folder (`/usr`, `/etc`) holds them.
   */
  hiddenPaths?: readonly string[];
  /** This process's uid (`process.getuid()`); 0 = shells run as uid/gid 65534. Default: the real one. */
  processUid?: number | undefined;
  /** True when no other process shares the database (PGlite): memory read before each turn is then kept between turns. */
  isSoleProcess?: boolean;
}

/** People whose memory a sole process keeps between turns (`MemoryStore`'s cache). */
const CACHED_MEMORY_USERS = 256;

/** Everything the lead agent works with, built once from the config. */
export interface AgentServices {
  sandboxTools: StructuredToolInterface[];
  /** `web_search` and `web_fetch`, as `web:` configures them; empty when it configures neither. */
  webTools: StructuredToolInterface[];
  /** The `mcp_servers:` (none connected until `start`); their tools are chosen per run. */
  mcp: McpServers;
  /** Reads the thread's pictures for models that see them. */
  readImage: ImageReader;
  /** How the shell is isolated, decided at start (`sandbox.isolation`); logged and in `/health`. */
  sandboxIsolation: SandboxIsolation;
  promptSources: PromptSources;
  /** The model clients, shared with the runtime. */
  chatModels: ChatModels;
  memoryStore: MemoryStore;
  goals: { store: GoalStore; config: GoalsConfig };
  /** Queues the finished conversation for memory extraction (absent when memory is off). */
  afterRun: ((run: CompletedRun) => void) | undefined;
  sandboxPaths(userId: string, threadId: string): SandboxPaths;
  resolveSkill(text: string): Promise<SlashSkillResolution>;
  skills: SkillRegistry;
  /** Runs pending memory updates (bounded by `timeoutMs`) and ends the MCP sessions; call before the database closes. */
  close(timeoutMs: number): Promise<void>;
}

/**
 * Sandbox, web and MCP tools, skills, memory and goals, wired from `sandbox:`, `web:`,
 * `mcp_servers:`, `skills:`, `memory:` and `goals:`.
 * Probes bubblewrap once (unless `sandbox.isolation: none`).
 *
 * @throws ConfigError when `sandbox.isolation: bubblewrap` and bubblewrap does not work here.
 */
export async function createAgentServices(options: AgentServicesOptions): Promise<AgentServices> {
  const { config, db, dataDir, skillsDir, logger } = options;
  const user = sandboxUserFor(options.processUid ?? process.getuid?.());
  const { isolation, bwrapPath } = await resolveIsolation(config.sandbox.isolation, () =>
    probeBubblewrap({ searchPath: options.environment.PATH, user }),
  );
  const bubblewrap: BubblewrapSetup | undefined =
    bwrapPath === undefined
      ? undefined
      : { bwrapPath, user, system: systemLayout(), hidden: await hiddenEntries([dataDir, ...(options.hiddenPaths ?? [])]) };
  // Only a sandbox runs as another user; unsandboxed shells are the server's own user.
  const owner = bubblewrap === undefined ? undefined : user;
  const skills = await SkillRegistry.load({ skillsDir, db, logger: logger.child({ component: 'skills' }) });
  const memoryStore = new MemoryStore(db, { cachedUsers: options.isSoleProcess ? CACHED_MEMORY_USERS : 0 });
  const chatModels = new ChatModels(config.models);
  const memoryLogger = logger.child({ component: 'memory' });
  const updater = new MemoryUpdater({ store: memoryStore, model: (name) => chatModels.get(name), config: config.memory, logger: memoryLogger });
  const queue = new MemoryQueue({ debounceMs: config.memory.debounce_seconds * 1000, run: (job) => updater.update(job), logger: memoryLogger });
  const learnsFromRuns = config.memory.enabled && config.models.length > 0;

  const resolveContext = createContextResolver({ dataDir, skillsDir, owner });
  const mcp = new McpServers(config.mcp_servers, logger);
  return {
    sandboxTools: createSandboxTools({
      resolveContext,
      config: config.sandbox,
      baseEnv: options.environment,
      bubblewrap,
    }),
    webTools: createWebTools(config.web),
    mcp,
    readImage: createImageReader(resolveContext),
    sandboxIsolation: isolation,
    promptSources: {
      skills: async () => formatAvailableSkills(await skills.listEnabled()),
      activeSkill: async (text) => {
        const resolution = await resolveSlashSkill(text, skills);
        return resolution.kind === 'active' ? formatActiveSkill(resolution.skill, await skills.instructions(resolution.skill.name)) : '';
      },
      ...(config.memory.injection_enabled
        ? { memory: async (userId: string) => formatMemoryForPrompt(await memoryStore.get(userId), config.memory.max_injection_tokens) }
        : {}),
    },
    chatModels,
    memoryStore,
    goals: { store: new GoalStore(db), config: config.goals },
    afterRun: learnsFromRuns
      ? (run) => {
          queue.enqueue({
            userId: run.memoryOwner,
            threadId: run.threadId,
            modelName: run.modelName,
            conversation: conversationForMemory(run.messages),
          });
        }
      : undefined,
    sandboxPaths: (userId, threadId) => new SandboxPaths({ dataDir, skillsDir, userId, threadId, owner }),
    resolveSkill: (text) => resolveSlashSkill(text, skills),
    skills,
    close: async (timeoutMs) => {
      await Promise.all([queue.close({ timeoutMs }), mcp.close()]);
    },
  };
}
