import type { StructuredToolInterface } from '@langchain/core/tools';
import type { Config } from '../config/index.js';
import type { Database } from '../db/index.js';
import type { Logger } from '../logger.js';
import { GoalStore, type GoalsConfig } from './goals/index.js';
import type { CompletedRun, PromptSources } from './lead-agent.js';
import { conversationForMemory, formatMemoryForPrompt, MemoryQueue, MemoryStore, MemoryUpdater } from './memory/index.js';
import { ChatModels } from './models.js';
import { SandboxPaths } from './sandbox/paths.js';
import { createContextResolver, createSandboxTools } from './sandbox/tools.js';
import { formatActiveSkill, formatAvailableSkills, resolveSlashSkill, SkillRegistry, type SlashSkillResolution } from './skills/index.js';

export interface AgentServicesOptions {
  config: Config;
  db: Database;
  /** Absolute; user files live under `<dataDir>/users/`. */
  dataDir: string;
  /** Absolute; holds `public/` and `custom/`. */
  skillsDir: string;
  /** The environment bash starts from (scrubbed before use). */
  environment: Record<string, string | undefined>;
  logger: Logger;
}

/** Everything the lead agent works with, built once from the config. */
export interface AgentServices {
  sandboxTools: StructuredToolInterface[];
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
  /** Runs pending memory updates (bounded by `timeoutMs`); call before the database closes. */
  close(timeoutMs: number): Promise<void>;
}

/** Sandbox, skills, memory and goals, wired from `sandbox:`, `skills:`, `memory:` and `goals:`. */
export async function createAgentServices(options: AgentServicesOptions): Promise<AgentServices> {
  const { config, db, dataDir, skillsDir, logger } = options;
  const skills = await SkillRegistry.load({ skillsDir, db, logger: logger.child({ component: 'skills' }) });
  const memoryStore = new MemoryStore(db);
  const chatModels = new ChatModels(config.models);
  const memoryLogger = logger.child({ component: 'memory' });
  const updater = new MemoryUpdater({ store: memoryStore, model: (name) => chatModels.get(name), config: config.memory, logger: memoryLogger });
  const queue = new MemoryQueue({ debounceMs: config.memory.debounce_seconds * 1000, run: (job) => updater.update(job), logger: memoryLogger });
  const learnsFromRuns = config.memory.enabled && config.models.length > 0;

  return {
    sandboxTools: createSandboxTools({
      resolveContext: createContextResolver({ dataDir, skillsDir }),
      config: config.sandbox,
      baseEnv: options.environment,
    }),
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
            userId: run.userId,
            threadId: run.threadId,
            modelName: run.modelName,
            conversation: conversationForMemory(run.messages),
          });
        }
      : undefined,
    sandboxPaths: (userId, threadId) => new SandboxPaths({ dataDir, skillsDir, userId, threadId }),
    resolveSkill: (text) => resolveSlashSkill(text, skills),
    skills,
    close: (timeoutMs) => queue.close({ timeoutMs }),
  };
}
