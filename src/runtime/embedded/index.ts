import { randomUUID } from 'node:crypto';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { StreamMode } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import pLimit, { type LimitFunction } from 'p-limit';
import { v7 as uuidv7 } from 'uuid';
import { type AgentSettings, loadAgentSettings } from '../../agent/agent-settings.js';
import type { ModelConfig } from '../../agent/config.js';
import type { SummarizationConfig } from '../../agent/context/config.js';
import { ContextKeeper } from '../../agent/context/keeper.js';
import { driveGoal, GoalStore, type GoalsConfig, toGoalJson } from '../../agent/goals/index.js';
import { type CompletedRun, LeadAgent, type PromptSources, type RunTools } from '../../agent/lead-agent.js';
import type { McpServers } from '../../agent/mcp/servers.js';
import { MemoryStore } from '../../agent/memory/index.js';
import { memoryOwnerOf } from '../../agent/memory/owner.js';
import { ChatModels } from '../../agent/models.js';
import { DEFAULT_AGENT_NAME, isDefaultAgent, loadAgentSoul, loadCustomAgentSoul } from '../../agent/prompt.js';
import type { BashAccess } from '../../agent/sandbox/config.js';
import { SANDBOX_NETWORK_KEY, SANDBOX_SECRETS_KEY, SANDBOX_VARIABLES_KEY } from '../../agent/sandbox/context.js';
import { createSetupAgentTool } from '../../agent/setup-agent.js';
import type { SubagentsConfig } from '../../agent/subagents/config.js';
import type { ImageReader } from '../../agent/vision/shown-images.js';
import type { Database } from '../../db/index.js';
import type { TokenUsage } from '../../db/schema/index.js';
import { AgentError, AppError, describeError, NotFoundError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { SCHEDULE_ORIGIN_KEY } from '../../schedules/types.js';
import {
  type AgentRuntime,
  type CreateThreadRequest,
  type GoalInfo,
  LEAD_AGENT_ID,
  type MemoryInfo,
  type ModelInfo,
  type RunInfo,
  type RunOptions,
  type RunRequest,
  type RunStream,
  type SetGoalRequest,
  type StreamPart,
  type ThreadGoalInfo,
  type ThreadInfo,
} from '../types.js';
import { DrizzleCheckpointSaver } from './checkpointer.js';
import { EventChannel } from './event-channel.js';
import {
  accessFor,
  assertUuid,
  channelUserIdOf,
  isTrustedSender,
  resolveModel,
  runUserId,
  type ShellIsolation,
  scheduleOriginIn,
  toAgentError,
} from './run-request.js';
import { type RunEnding, RunStore, toRunInfo } from './run-store.js';
import { serializeMessage, serializeUpdates, serializeValues, streamMetadataPicker, usageOfLastTurn } from './serialize.js';
import { abortable, delay } from './waiting.js';

export interface EmbeddedRuntimeOptions {
  db: Database;
  models: ModelConfig[];
  /** Folder holding `lead/SOUL.md` and custom agents. */
  agentsDir: string;
  /** Where `lead/SOUL.md` comes from when `agentsDir` has none (the folder shipped with the server). */
  defaultAgentsDir?: string;
  logger: Logger;
  /** Defaults to the drizzle-backed saver on `db`. */
  checkpointer?: BaseCheckpointSaver;
  /** How long an active run holds its thread without a renewal; default 30 s. */
  leaseMs?: number;
  /** True when no other process shares the database (PGlite): active runs found at start are orphans. */
  isSoleProcess?: boolean;
  /**
   * True when another process may take a message over once its run's lease lapsed (the Redis
   * bus): such a run then stops instead of renewing. Default false.
   */
  canBeTakenOver?: boolean;
  /** Background runs (`createRun`) working at once; more wait for a slot, holding their thread. Default 4. */
  maxBackgroundRuns?: number;
  /** Default recursion limit of a run; default 100 (reference §4.5). */
  recursionLimit?: number;
  /** The agent's tools (the sandbox's, the web's); absent = the agent only talks (and may ask a clarification question). */
  tools?: readonly StructuredToolInterface[];
  /** Who gets `bash` (see `BashAccess`); default `trusted`. */
  bashAccess?: BashAccess;
  /**
   * Whether the shell is isolated (from the sandbox's probe at start). Default: not isolated and
   * not explicitly so, which limits `bash_access: everyone` to trusted senders (see `accessFor`).
   */
  shellIsolation?: ShellIsolation;
  /** Skills and memory for the system prompt. */
  promptSources?: PromptSources;
  /** Model clients shared with other users of the models; defaults to clients of `models`. */
  chatModels?: ChatModels;
  /** Where memory lives; defaults to the tables on `db`. */
  memoryStore?: MemoryStore;
  /** Goals judged after each visible turn; absent = goals are not pursued. */
  goals?: { store: GoalStore; config: GoalsConfig };
  /** Called after every successful run with its final messages (the memory queue listens). */
  afterRun?: (run: CompletedRun) => void;
  /** How long conversations are kept within their model's window; absent: never summarised. */
  summarization?: SummarizationConfig;
  /** Reads the pictures shown to models that see them (`models[].supports_vision`); absent: none are. */
  readImage?: ImageReader;
  /** The MCP servers' tools, offered per run by the agent's allow-list and the sender's trust; absent: none. */
  mcp?: McpServers;
  /** The `task` tool's helpers (`subagents:`); absent: the agent has no `task`. */
  subagents?: SubagentsConfig;
  /** Where `/bootstrap` conversations save the agents they make (`agents.dir`); absent: they cannot. */
  agentSetupDir?: string;
  /**
   * `schedule_task`, offered to runs whose `context.schedule_origin` names the chat its schedules
   * answer into (chat turns: the manager sets it, the gateway never lets a caller); absent: none.
   */
  scheduleTaskTool?: StructuredToolInterface;
}


const DEFAULT_MAX_BACKGROUND_RUNS = 4;
/**
 * Why a run's controller aborts when another process took its thread over (this one stalled past
 * its lease): the run then stops without a word, and the process that took the message answers.
 */
const TAKEN_OVER = 'taken over';
/** Stops a run that another process ended: as cancelled, or silently when it took the run over. */
function stopFor(ending: Exclude<RunEnding, 'finished'>, controller: AbortController): void {
  controller.abort(ending === 'taken-over' ? TAKEN_OVER : undefined);
}

/** How often `joinRun` looks at a run held by another process. */
const JOIN_POLL_MS = 250;

interface ActiveRun {
  controller: AbortController;
  done: Promise<RunOutcome>;
}

type RunOutcome = { ok: true; values: Record<string, unknown> } | { ok: false; error: AppError };

/** The lead agent in this process: LangGraph on ChatOpenAI, checkpoints and runs in the database. */
export async function createEmbeddedRuntime(options: EmbeddedRuntimeOptions): Promise<AgentRuntime> {
  const { agentsDir, defaultAgentsDir } = options;
  const soul = await loadAgentSoul(agentsDir, DEFAULT_AGENT_NAME).catch((error: unknown) => {
    if (defaultAgentsDir === undefined || defaultAgentsDir === agentsDir) throw error;
    return loadAgentSoul(defaultAgentsDir, DEFAULT_AGENT_NAME);
  });
  const store = new RunStore(options.db, options.leaseMs ?? 30_000, options.canBeTakenOver);
  if (options.isSoleProcess) {
    const orphans = await store.failAllActiveRuns('interrupted: the server stopped while the run was active');
    if (orphans > 0) options.logger.warn({ orphans }, 'marked runs left active by a previous process as failed');
  }
  return new EmbeddedRuntime(options, store, soul);
}

class EmbeddedRuntime implements AgentRuntime {
  private readonly active = new Map<string, ActiveRun>();
  private readonly agent: LeadAgent;
  private readonly chatModels: ChatModels;
  private goals: GoalStore | undefined;
  private memories: MemoryStore | undefined;
  private readonly checkpointer: BaseCheckpointSaver;
  private readonly leaseRenewMs: number;
  /** `setup_agent`, for `/bootstrap` conversations; absent when agents cannot be saved. */
  private readonly setupAgentTool: StructuredToolInterface | undefined;
  /** Streamed and waited runs are bounded by their callers (the manager's workers); background runs by this. */
  private readonly backgroundRuns: LimitFunction;

  constructor(
    private readonly options: EmbeddedRuntimeOptions,
    private readonly store: RunStore,
    private readonly soul: string,
  ) {
    this.checkpointer = options.checkpointer ?? new DrizzleCheckpointSaver(options.db);
    this.leaseRenewMs = Math.max(50, Math.floor((options.leaseMs ?? 30_000) / 3));
    this.backgroundRuns = pLimit(options.maxBackgroundRuns ?? DEFAULT_MAX_BACKGROUND_RUNS);
    this.chatModels = options.chatModels ?? new ChatModels(options.models);
    this.setupAgentTool = options.agentSetupDir === undefined ? undefined : createSetupAgentTool(options.agentSetupDir);
    this.agent = new LeadAgent({
      soul,
      chatModels: this.chatModels,
      checkpointer: this.checkpointer,
      tools: options.tools ?? [],
      sources: options.promptSources ?? {},
      ...(options.readImage === undefined ? {} : { readImage: options.readImage }),
      ...(options.subagents === undefined ? {} : { subagents: options.subagents }),
      ...(options.summarization === undefined
        ? {}
        : {
            context: new ContextKeeper({
              config: options.summarization,
              models: options.models,
              chatModels: this.chatModels,
              logger: options.logger.child({ component: 'context' }),
            }),
          }),
      logger: options.logger,
    });
  }

  models(): ModelInfo[] {
    return this.options.models.map((m) => ({
      name: m.name,
      model: m.model,
      ...(m.thinking === undefined ? {} : { thinking: m.thinking }),
      ...(m.supports_vision === true ? { supports_vision: true } : {}),
    }));
  }

  async createThread(request: CreateThreadRequest = {}): Promise<ThreadInfo> {
    const id = request.thread_id ?? randomUUID();
    assertUuid(id, 'thread_id');
    const row = await this.store.createThread(id, request.metadata ?? {}, request.if_exists ?? 'raise');
    return this.toThreadInfo(row, null, false);
  }

  async getThread(threadId: string, options: { withValues?: boolean } = {}): Promise<ThreadInfo> {
    assertUuid(threadId, 'thread_id');
    const row = await this.store.getThread(threadId);
    if (options.withValues === false) return this.toThreadInfo(row, null, await this.store.hasActiveRun(threadId));
    const tuple = await this.checkpointer.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } });
    const values = tuple ? serializeValues(tuple.checkpoint.channel_values) : null;
    return this.toThreadInfo(row, values, await this.store.hasActiveRun(threadId));
  }

  async streamRun(threadId: string, request: RunRequest, options: RunOptions = {}): Promise<RunStream> {
    const events = new EventChannel<StreamPart>();
    const { run } = await this.start(threadId, request, options, { sink: events });
    return { run, events };
  }

  async waitRun(threadId: string, request: RunRequest, options: RunOptions = {}) {
    const { run, done } = await this.start(threadId, request, options, {});
    const outcome = await done;
    if (!outcome.ok) throw outcome.error;
    return { run: toRunInfo(await this.store.getRun(threadId, run.run_id)), values: outcome.values };
  }

  async createRun(threadId: string, request: RunRequest, options: Pick<RunOptions, 'sandboxSecrets' | 'sandboxVariables'> = {}): Promise<RunInfo> {
    const { run } = await this.start(threadId, request, options, { isBackground: true });
    return run;
  }

  async getRun(threadId: string, runId: string): Promise<RunInfo> {
    assertUuid(threadId, 'thread_id');
    assertUuid(runId, 'run_id');
    return toRunInfo(await this.store.getRun(threadId, runId));
  }

  async joinRun(threadId: string, runId: string, options: Pick<RunOptions, 'signal'> = {}): Promise<RunInfo> {
    assertUuid(threadId, 'thread_id');
    assertUuid(runId, 'run_id');
    const local = this.active.get(runId);
    if (local) await abortable(local.done, options.signal);
    // Held by another process (or just finished here): its row says when it ends. A run whose
    // lease ran out belonged to a process that died; it will never end by itself, so it counts as ended.
    for (;;) {
      const row = await this.store.getRun(threadId, runId);
      const isActive = (row.status === 'pending' || row.status === 'running') && row.leaseExpiresAt.getTime() >= Date.now();
      if (!isActive) return toRunInfo(row);
      await abortable(delay(JOIN_POLL_MS), options.signal);
    }
  }

  async cancelRun(threadId: string, runId: string, options: { wait?: boolean } = {}): Promise<void> {
    const run = await this.getRun(threadId, runId);
    if (run.status !== 'pending' && run.status !== 'running') return;
    const local = this.active.get(runId);
    if (!local) {
      // Held by another process: it sees the status change at its next lease renewal.
      await this.store.requestCancel(runId);
      return;
    }
    local.controller.abort();
    if (options.wait) await local.done;
  }

  async getGoal(threadId: string): Promise<GoalInfo | null> {
    assertUuid(threadId, 'thread_id');
    await this.store.getThread(threadId);
    const goal = await this.goalStore().get(threadId);
    return goal ? toGoalJson(goal) : null;
  }

  async setGoal(threadId: string, request: SetGoalRequest): Promise<GoalInfo> {
    assertUuid(threadId, 'thread_id');
    if (this.options.goals?.config.enabled !== true) {
      throw new AppError('CONFLICT', 'goals are disabled', { status: 409, userMessage: 'Goals are turned off on this server.' });
    }
    const goal = await this.goalStore().set(threadId, request.objective, {
      ...(request.max_continuations === undefined ? {} : { maxContinuations: request.max_continuations }),
    });
    return toGoalJson(goal);
  }

  async clearGoal(threadId: string): Promise<boolean> {
    assertUuid(threadId, 'thread_id');
    return this.goalStore().clear(threadId);
  }

  async listGoals(options: { ownerUserId?: string; limit: number }): Promise<ThreadGoalInfo[]> {
    const found = await this.goalStore().list(options);
    return found.map(({ goal, threadMetadata }) => ({
      thread_id: goal.threadId,
      conversation: conversationOf(threadMetadata),
      goal: toGoalJson(goal),
    }));
  }

  async getMemory(userId: string): Promise<MemoryInfo> {
    const memory = await this.memoryStore().get(userId);
    return {
      user_id: userId,
      summaries: {
        work_context: memory.summaries.workContext,
        personal_context: memory.summaries.personalContext,
        top_of_mind: memory.summaries.topOfMind,
      },
      facts: memory.facts.map((fact) => ({
        id: fact.id,
        content: fact.content,
        category: fact.category,
        confidence: fact.confidence,
        source: fact.source,
        created_at: fact.createdAt.toISOString(),
      })),
    };
  }

  clearMemory(userId: string): Promise<number> {
    return this.memoryStore().clear(userId);
  }

  deleteMemoryFact(userId: string, factId: string): Promise<boolean> {
    return this.memoryStore().deleteFact(userId, factId);
  }

  async close(): Promise<void> {
    const runs = [...this.active.values()];
    for (const run of runs) run.controller.abort();
    await Promise.allSettled(runs.map((run) => run.done));
  }

  /** Admits the run (throws when the thread is busy) and starts it in the background. */
  private async start(
    threadId: string,
    request: RunRequest,
    options: RunOptions,
    mode: { sink?: EventChannel<StreamPart>; isBackground?: boolean },
  ): Promise<{ run: RunInfo; done: Promise<RunOutcome> }> {
    const { signal } = options;
    assertUuid(threadId, 'thread_id');
    if (request.assistant_id !== LEAD_AGENT_ID) throw new NotFoundError('Assistant');
    const model = resolveModel(this.options.models, request);
    const soul = await this.soulFor(request);
    const agentSettings = await this.agentSettingsFor(request);
    const row = await this.store.admitRun({
      // Time-ordered: runs listed newest first stay in order within one millisecond (PGlite's now() counts whole ones).
      id: uuidv7(),
      threadId,
      assistantId: request.assistant_id,
      metadata: request.metadata ?? {},
      kwargs: { config: request.config ?? {}, context: request.context ?? {}, stream_mode: request.stream_mode ?? [] },
    });
    const run = toRunInfo(row);
    const controller = new AbortController();
    if (signal) {
      if (signal.aborted) controller.abort();
      else signal.addEventListener('abort', () => controller.abort(), { once: true });
    }
    const environment = { secrets: options.sandboxSecrets ?? {}, variables: options.sandboxVariables ?? {}, network: agentSettings.sandbox.network };
    const done = this.execute(run, request, { model, soul, mcpAllowList: agentSettings.mcpTools }, controller, mode, environment);
    this.active.set(run.run_id, { controller, done });
    void done.finally(() => this.active.delete(run.run_id));
    return { run, done };
  }

  private async execute(
    run: RunInfo,
    request: RunRequest,
    { model, soul, mcpAllowList }: { model: ModelConfig; soul: string; mcpAllowList: readonly string[] | undefined },
    controller: AbortController,
    { sink, isBackground = false }: { sink?: EventChannel<StreamPart>; isBackground?: boolean },
    sandbox: { secrets: Record<string, string>; variables: Record<string, string>; network: boolean | undefined },
  ): Promise<RunOutcome> {
    const ref = { id: run.run_id, threadId: run.thread_id };
    const lease = setInterval(() => {
      this.store
        .renewLease(run.run_id)
        .then((hold) => hold !== 'held' && stopFor(hold, controller))
        .catch((error: unknown) => this.options.logger.warn({ runId: run.run_id, err: describeError(error) }, 'lease renewal failed'));
    }, this.leaseRenewMs);
    lease.unref();
    const requested = new Set(request.stream_mode ?? ['values']);
    const wantsMessages = requested.has('messages-tuple') || requested.has('messages');
    const wantsValues = requested.has('values');
    const wantsUpdates = requested.has('updates');
    const wantsCustom = requested.has('custom');
    let lastValues: { messages?: BaseMessage[] } | undefined;
    const inputMessages = request.input?.messages ?? [];
    const userId = runUserId(request);
    const agentName = typeof request.context?.agent_name === 'string' ? request.context.agent_name : undefined;
    const memoryOwner = memoryOwnerOf(userId, agentName);
    const access = accessFor(this.options.bashAccess ?? 'trusted', request, this.options.shellIsolation);
    const recursionLimit = request.config?.recursion_limit ?? this.options.recursionLimit ?? 100;
    sink?.push({ event: 'metadata', data: { run_id: run.run_id, attempt: 1 } });
    // Taken inside the lease, so a run waiting for its turn keeps its thread (and is never taken for dead).
    const slot = isBackground ? this.backgroundSlot() : undefined;
    try {
      if (slot) await abortable(slot, controller.signal);
      const mcp = await this.options.mcp?.toolsFor({ allowList: mcpAllowList, isTrustedSender: isTrustedSender(request) });
      // A `/bootstrap` conversation of a trusted sender may save agents, where they can be saved.
      const setupTool = request.context?.is_bootstrap === true && isTrustedSender(request) ? this.setupAgentTool : undefined;
      const turn = await this.agent.prepareTurn({
        memoryOwner,
        access,
        soul,
        messageText: inputMessages[0]?.content ?? '',
        unavailableTools: mcp?.unavailable ?? [],
        isSettingUpAgent: setupTool !== undefined,
      });
      const scheduleOrigin = scheduleOriginIn(request);
      const scheduleTool = scheduleOrigin === undefined ? undefined : this.options.scheduleTaskTool;
      const runTools = withRunTools(mcp, [
        ['setup', setupTool],
        ['schedule', scheduleTool],
      ]);
      const graph = this.agent.graph(model, access, runTools);
      const config = {
        configurable: {
          ...request.config?.configurable,
          ...LeadAgent.configurableFor(turn),
          thread_id: run.thread_id,
          user_id: userId,
          ...channelUserIdOf(request),
          // An object, so LangGraph never copies it into checkpoint metadata (it copies primitives).
          // Set here, after the caller's own keys: only the manager's chat turns name a chat.
          [SCHEDULE_ORIGIN_KEY]: scheduleTool === undefined ? undefined : scheduleOrigin,
          [SANDBOX_SECRETS_KEY]: sandbox.secrets,
          [SANDBOX_VARIABLES_KEY]: sandbox.variables,
          ...(sandbox.network === undefined ? {} : { [SANDBOX_NETWORK_KEY]: sandbox.network }),
          checkpoint_ns: '',
        },
        recursionLimit,
        // Values always: the final state is the run's result and its usage. Messages always too:
        // it makes the model call stream, which keeps long generations alive through proxies.
        streamMode: ['values', 'messages', ...(wantsUpdates ? ['updates'] : []), ...(wantsCustom ? ['custom'] : [])] as StreamMode[],
        // One checkpoint per turn, written when it ends (also on error or cancel): runs are never
        // resumed mid-way, and per-step checkpoints cost about a quarter of a run's CPU on PGlite.
        durability: 'exit' as const,
        signal: controller.signal,
      };
      const pickStreamMetadata = streamMetadataPicker();
      /** Streams one turn of the graph into the sink; resolves with the thread's messages after it. */
      const streamTurn = async (messages: BaseMessage[]): Promise<BaseMessage[]> => {
        const stream = await graph.stream({ messages }, config);
        for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
          if (mode === 'values') {
            lastValues = chunk as typeof lastValues;
            if (wantsValues) sink?.push({ event: 'values', data: serializeValues(chunk) });
          } else if (mode === 'messages' && wantsMessages) {
            const [message, metadata] = chunk as [BaseMessage, unknown];
            sink?.push({ event: 'messages', data: [serializeMessage(message), pickStreamMetadata(metadata)] });
          } else if (mode === 'updates' && wantsUpdates) {
            sink?.push({ event: 'updates', data: serializeUpdates(chunk) });
          } else if (mode === 'custom') {
            // What tools report while they work (the helpers' progress), as they wrote it.
            sink?.push({ event: 'custom', data: chunk });
          }
        }
        return lastValues?.messages ?? [];
      };
      const afterVisibleTurn = await streamTurn(
        inputMessages.map((m) => new HumanMessage({ content: m.content, additional_kwargs: m.additional_kwargs ?? {} })),
      );
      const goals = this.options.goals;
      const success = () => ({ status: 'success' as const, ...usageOutcome(lastValues?.messages ?? []) });
      // Ended by another process meanwhile (a cancel there, or a takeover): nothing of it is this process's to deliver.
      const stopUnlessFinished = (ending: RunEnding) => {
        if (ending === 'finished') return;
        stopFor(ending, controller);
        throw new Error(`run ended by another process (${ending})`);
      };
      // Most threads have no goal: then the run ends in the statement that found none.
      const ending = goals?.config.enabled === true ? await this.store.finishRunUnlessGoal(ref, success()) : undefined;
      if (ending !== undefined && ending !== 'goal') stopUnlessFinished(ending);
      const endedWithoutGoal = ending === 'finished';
      if (goals?.config.enabled && !endedWithoutGoal) {
        await driveGoal({
          store: goals.store,
          threadId: run.thread_id,
          runId: run.run_id,
          messages: afterVisibleTurn,
          evaluator: this.evaluatorFor(model),
          maxContinuations: goals.config.max_continuations,
          signal: controller.signal,
          continueWith: (message) => streamTurn([message]),
          logger: this.options.logger,
        });
      }
      if (!endedWithoutGoal) stopUnlessFinished(await this.store.finishRun(ref, success()));
      this.options.afterRun?.({ threadId: run.thread_id, memoryOwner, modelName: model.name, messages: lastValues?.messages ?? [] });
      return { ok: true, values: serializeValues(lastValues) };
    } catch (error) {
      const cancelled = controller.signal.aborted;
      const takenOver = controller.signal.reason === TAKEN_OVER;
      const failure = takenOver
        ? new AgentError('RUN_TAKEN_OVER', 'run taken over by another process', { status: 409 })
        : cancelled
          ? new AgentError('RUN_CANCELLED', 'run cancelled', { status: 409, userMessage: 'The run was cancelled.' })
          : toAgentError(error, recursionLimit);
      this.options.logger.warn(
        { runId: run.run_id, threadId: run.thread_id, err: describeError(error) },
        takenOver ? 'run taken over by another process after its lease ran out; this one stops' : cancelled ? 'run cancelled' : 'run failed',
      );
      sink?.push({ event: 'error', data: { error: failure.code, message: failure.userMessage } });
      await this.store
        .finishRun(ref, { status: cancelled ? 'interrupted' : 'error', error: failure.message })
        .catch((e: unknown) => this.options.logger.error({ runId: run.run_id, err: describeError(e) }, 'could not record run end'));
      return { ok: false, error: failure };
    } finally {
      clearInterval(lease);
      void slot?.then((release) => release());
      sink?.close();
    }
  }

  /** Resolves, once one of the background slots is free, with the function that frees it again. */
  private backgroundSlot(): Promise<() => void> {
    return new Promise((acquired) => {
      void this.backgroundRuns(() => new Promise<void>((release) => acquired(release)));
    });
  }

  /** `context.agent_name` picks a custom agent's persona (reference §4.5); otherwise the default agent's. */
  private async soulFor(request: RunRequest): Promise<string> {
    const name = request.context?.agent_name;
    if (isDefaultAgent(name)) return this.soul;
    if (typeof name !== 'string') throw new AppError('BAD_REQUEST', 'agent_name must be a string', { status: 400, userMessage: 'agent_name must be a string' });
    return loadCustomAgentSoul(this.options.agentsDir, name, this.soul);
  }

  /** The run's agent's settings (its network choice, its MCP allow-list) from its `config.yaml`. Call after `soulFor` validated the name. */
  private agentSettingsFor(request: RunRequest): Promise<AgentSettings> {
    const name = request.context?.agent_name;
    return loadAgentSettings(this.options.agentsDir, isDefaultAgent(name) ? DEFAULT_AGENT_NAME : (name as string));
  }

  private memoryStore(): MemoryStore {
    this.memories ??= this.options.memoryStore ?? new MemoryStore(this.options.db);
    return this.memories;
  }

  private goalStore(): GoalStore {
    this.goals ??= this.options.goals?.store ?? new GoalStore(this.options.db);
    return this.goals;
  }

  /** `goals.evaluator_model` when set (checked against `models` at config load), else the run's own model. */
  private evaluatorFor(model: ModelConfig): BaseChatModel {
    return this.chatModels.get(this.options.goals?.config.evaluator_model ?? model.name);
  }

  private toThreadInfo(
    row: { id: string; metadata: Record<string, unknown>; createdAt: Date; updatedAt: Date },
    values: Record<string, unknown> | null,
    busy: boolean,
  ): ThreadInfo {
    return {
      thread_id: row.id,
      created_at: row.createdAt.toISOString(),
      updated_at: row.updatedAt.toISOString(),
      metadata: row.metadata,
      status: busy ? 'busy' : 'idle',
      values,
      interrupts: {},
    };
  }
}

/** The run's own tools beside the MCP servers' (`setup_agent`, `schedule_task`), as one set keyed for the graph cache. */
function withRunTools(mcp: RunTools | undefined, extra: ReadonlyArray<readonly [string, StructuredToolInterface | undefined]>): RunTools | undefined {
  const offered = extra.filter((entry): entry is readonly [string, StructuredToolInterface] => entry[1] !== undefined);
  if (offered.length === 0) return mcp;
  return {
    key: [mcp?.key ?? '', ...offered.map(([name]) => name)].join('\u0000'),
    tools: [...(mcp?.tools ?? []), ...offered.map(([, tool]) => tool)],
  };
}

/** The `usage` part of a successful run's outcome: the last turn's token counts, when the model reported them. */
function usageOutcome(messages: readonly BaseMessage[]): { usage?: TokenUsage } {
  const usage = usageOfLastTurn(messages);
  return usage ? { usage } : {};
}

/**
 * Where a thread's conversation lives, from its metadata: a chat's thread carries `channel_source`
 * (src/manager/threads.ts), a schedule's `schedule_source` (src/schedules/book.ts); an API thread neither.
 */
function conversationOf(metadata: Record<string, unknown>): ThreadGoalInfo['conversation'] {
  for (const key of ['channel_source', 'schedule_source']) {
    const source = metadata[key] as { provider?: unknown; chat_id?: unknown } | undefined;
    if (typeof source?.provider === 'string' && typeof source.chat_id === 'string') return { provider: source.provider, chat_id: source.chat_id };
  }
  return null;
}
