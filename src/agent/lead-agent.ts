import { type BaseMessage, RemoveMessage, SystemMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { REMOVE_ALL_MESSAGES } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createClarificationTool } from './clarification.js';
import type { ModelConfig } from './config.js';
import { type ContextKeeper, type FittedHistory, withSummary } from './context/keeper.js';
import { IMAGE_TOKENS, messageTokens } from './context/window.js';
import { withInterruptedToolCallsClosed } from './interrupted-tool-calls.js';
import { buildLeadGraph, type LeadGraph, type LeadStateValues, type ModelRequest } from './lead-graph.js';
import type { ChatModels } from './models.js';
import { buildSystemPrompt, type UploadedFileInfo } from './prompt.js';
import type { SubagentsConfig } from './subagents/config.js';
import { createTaskTool, HELPER_SOUL } from './subagents/task-tool.js';
import { estimateTokens } from './tokens.js';
import { type ImageReader, imagesShownCount, VIEW_IMAGE, withImagesShown } from './vision/shown-images.js';

export type { LeadGraph } from './lead-graph.js';

/** What one run may do; decided by the caller's trust, before the run starts. */
export interface TurnAccess {
  /** Shell commands on the host (`bash`); the file tools stay confined to the thread's folders. */
  bash: boolean;
  /** `ask_clarification`; off for non-interactive channels (GitHub), where nobody answers. */
  clarification: boolean;
}

/** The prompt sections of one run, loaded once when it starts and reused by every model call. */
export interface TurnContext {
  access: TurnAccess;
  /** The persona: the default agent's, or a custom agent's `SOUL.md`. */
  soul: string;
  /** `<available_skills>` block; '' when none are enabled. */
  skills: string;
  /** `<active_skill>` block when the run's message was `/<skill> task`; '' otherwise. */
  activeSkill: string;
  /** `<memory>` block of the run's user; '' when empty or disabled. */
  memory: string;
  /** `<server>: <reason>` for each tool server the run was meant to have that is down now. */
  unavailableTools: readonly string[];
  /** The run belongs to a `/bootstrap` conversation and has `setup_agent`. */
  isSettingUpAgent: boolean;
}

/** Tools a run gets besides the agent's own (an MCP server's), with a key naming their definitions. */
export interface RunTools {
  key: string;
  tools: readonly StructuredToolInterface[];
}

/** A run that ended well, for observers such as the memory updater. */
export interface CompletedRun {
  threadId: string;
  /** Whose memory learns from it: the storage user, or the (user, agent) pair (`memoryOwnerOf`). */
  memoryOwner: string;
  modelName: string;
  messages: BaseMessage[];
}

/** Where prompt sections come from; each is optional so the agent runs with any subset. */
export interface PromptSources {
  skills?(): Promise<string>;
  activeSkill?(messageText: string): Promise<string>;
  memory?(userId: string): Promise<string>;
}

export interface LeadAgentOptions {
  /** The default persona, for runs that name no custom agent. */
  soul: string;
  chatModels: ChatModels;
  checkpointer: BaseCheckpointSaver;
  /** The agent's tools: the sandbox's (`bash` among them, offered by access) and the web's; `ask_clarification` is added here. */
  tools: readonly StructuredToolInterface[];
  sources: PromptSources;
  /** Keeps long conversations within their model's window; absent: requests carry the whole history. */
  context?: ContextKeeper;
  /** Reads the pictures a model that sees them is shown; absent: none are. */
  readImage?: ImageReader;
  /** The `task` tool's helpers; absent or disabled: the agent has no `task`. */
  subagents?: SubagentsConfig;
  logger: Logger;
  now?: () => Date;
}

/** Graphs kept compiled: models × access levels × tool sets in use. */
const MAX_COMPILED_GRAPHS = 64;

/** Where the run's `TurnContext` rides in `configurable`; an object, so never copied to metadata. */
const TURN_KEY = 'deerflow_turn';

/**
 * The default agent: a ReAct loop over the sandbox tools and `ask_clarification`, with a system
 * prompt rebuilt for every model call from the persona, the run's `TurnContext` and the uploads
 * of the message being answered. Graphs are compiled once per model and access level.
 */
export class LeadAgent {
  private readonly graphs = new Map<string, LeadGraph>();
  private readonly now: () => Date;

  constructor(private readonly options: LeadAgentOptions) {
    this.now = options.now ?? (() => new Date());
  }

  graph(model: ModelConfig, access: TurnAccess, runTools?: RunTools): LeadGraph {
    const key = `${model.name}\u0000${access.bash}\u0000${access.clarification}\u0000${runTools?.key ?? ''}`;
    let graph = this.graphs.get(key);
    if (!graph) {
      const tools = this.toolsFor(access, model, runTools);
      const toolTokens = this.options.context?.isActive(model) ? estimateTokens(JSON.stringify(tools.map((tool) => convertToOpenAITool(tool)))) : 0;
      graph = buildLeadGraph({
        model: this.options.chatModels.get(model.name),
        tools,
        request: (state, config) => this.modelRequest(model, toolTokens, state, config),
        checkpointer: this.options.checkpointer,
      });
      // Tool sets change when an MCP server changes its tools: the oldest graphs go first.
      if (this.graphs.size >= MAX_COMPILED_GRAPHS) this.graphs.delete(this.graphs.keys().next().value as string);
      this.graphs.set(key, graph);
    }
    return graph;
  }

  /**
   * The system prompt, then the history as the context keeper fits it to the model's window:
   * the summary of folded turns and the turns after it. When it folds more turns, the update
   * replaces the thread's messages with the ones it keeps.
   */
  private async modelRequest(model: ModelConfig, toolTokens: number, state: LeadStateValues, config: RunnableConfig): Promise<ModelRequest> {
    const seesImages = this.seesImages(model);
    const system = new SystemMessage(this.systemPrompt(state.messages, config, seesImages));
    const context = this.options.context;
    const fitted: FittedHistory = context
      ? await context.fit({
          model,
          fixedTokens: () => messageTokens(system) + toolTokens + (seesImages ? imagesShownCount(state.messages) * IMAGE_TOKENS : 0),
          summary: state.summary,
          messages: state.messages,
          threadId: config.configurable?.thread_id as string | undefined,
          ...(config.signal ? { signal: config.signal } : {}),
        })
      : { messages: withSummary(state.summary, state.messages) };
    const history = withInterruptedToolCallsClosed(fitted.messages);
    const { readImage } = this.options;
    const messages = [system, ...(seesImages && readImage ? await withImagesShown(history, readImage, config) : history)];
    if (fitted.folded === undefined) return { messages };
    return {
      messages,
      update: { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...fitted.folded.kept], summary: fitted.folded.summary },
    };
  }

  /** Loads the prompt sections for a run answering `messageText`, with the memory of `memoryOwner` (`memoryOwnerOf`). */
  async prepareTurn(input: {
    memoryOwner: string;
    messageText: string;
    access: TurnAccess;
    soul?: string;
    unavailableTools?: readonly string[];
    isSettingUpAgent?: boolean;
  }): Promise<TurnContext> {
    const { sources } = this.options;
    const [skills, activeSkill, memory] = await Promise.all([
      this.section('skills', () => sources.skills?.()),
      this.section('active skill', () => sources.activeSkill?.(input.messageText)),
      this.section('memory', () => sources.memory?.(input.memoryOwner)),
    ]);
    return { access: input.access, soul: input.soul ?? this.options.soul, skills, activeSkill, memory, unavailableTools: input.unavailableTools ?? [], isSettingUpAgent: input.isSettingUpAgent === true };
  }

  /** A prompt section, or '' when its source fails: a chat answer without memory beats no answer. */
  private async section(name: string, load: () => Promise<string> | undefined): Promise<string> {
    try {
      return (await load()) ?? '';
    } catch (error) {
      this.options.logger.warn({ section: name, err: describeError(error) }, 'prompt section unavailable; the run goes on without it');
      return '';
    }
  }

  /** `configurable` entries that carry the turn into the graph's prompt. */
  static configurableFor(turn: TurnContext): Record<string, unknown> {
    return { [TURN_KEY]: turn };
  }

  /**
   * The run's tools: the agent's own that `access` and the model allow, the run's extra ones (an
   * MCP server's), `ask_clarification` when someone can answer, and `task`, whose helpers get
   * the same tools but neither of the last two.
   */
  private toolsFor(access: TurnAccess, model: ModelConfig, runTools: RunTools | undefined): StructuredToolInterface[] {
    const seesImages = this.seesImages(model);
    const working = [...this.options.tools.filter((tool) => isOffered(tool.name, access, seesImages)), ...(runTools?.tools ?? [])];
    const tools = access.clarification ? [...working, createClarificationTool()] : [...working];
    const { subagents } = this.options;
    if (subagents?.enabled) {
      tools.push(
        createTaskTool({
          model: this.options.chatModels.get(model.name),
          tools: working,
          config: subagents,
          systemPrompt: () =>
            buildSystemPrompt({
              soul: HELPER_SOUL,
              now: this.now(),
              tools: working.map((tool) => tool.name),
              skills: '',
              activeSkill: '',
              memory: '',
              uploads: [],
              canAskClarification: false,
              canSeeImages: seesImages,
            }),
          runOf: (config) => config?.configurable?.[TURN_KEY] as TurnContext | undefined,
        }),
      );
    }
    return tools;
  }

  private seesImages(model: ModelConfig): boolean {
    return model.supports_vision === true && this.options.readImage !== undefined;
  }

  private systemPrompt(messages: BaseMessage[], config: RunnableConfig, canSeeImages: boolean): string {
    const turn = config.configurable?.[TURN_KEY] as TurnContext | undefined;
    const access = turn?.access ?? { bash: false, clarification: false };
    const toolNames = this.options.tools.map((tool) => tool.name).filter((name) => isOffered(name, access, canSeeImages));
    return buildSystemPrompt({
      soul: turn?.soul ?? this.options.soul,
      now: this.now(),
      tools: toolNames,
      skills: turn?.skills ?? '',
      activeSkill: turn?.activeSkill ?? '',
      memory: turn?.memory ?? '',
      unavailableTools: turn?.unavailableTools ?? [],
      isSettingUpAgent: turn?.isSettingUpAgent === true,
      uploads: currentUploads(messages),
      canAskClarification: access.clarification,
      canSeeImages,
    });
  }
}

/** Whether a run with `access`, on a model that does or does not see pictures, gets the sandbox tool `name`. */
function isOffered(name: string, access: TurnAccess, seesImages: boolean): boolean {
  if (name === 'bash') return access.bash;
  if (name === VIEW_IMAGE) return seesImages;
  return true;
}

/**
 * Files attached to the message being answered (the last human message the user wrote): shown
 * for that turn only, like DeerFlow's `<current_uploads>`.
 */
function currentUploads(messages: BaseMessage[]): UploadedFileInfo[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as BaseMessage;
    if (message.getType() !== 'human' || message.additional_kwargs?.hide_from_ui === true) continue;
    const files = message.additional_kwargs?.files;
    return Array.isArray(files) ? (files as UploadedFileInfo[]) : [];
  }
  return [];
}
