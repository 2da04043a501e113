import type { GoalJson } from '../agent/goals/index.js';

/** A thread's active goal, as `GET /api/threads/:id/goal` returns it. */
export type GoalInfo = GoalJson;

/** What the server remembers about one user, as `GET /api/memory` returns it. */
export interface MemoryInfo {
  user_id: string;
  summaries: { work_context: string; personal_context: string; top_of_mind: string };
  /** Newest first. */
  facts: Array<{ id: string; content: string; category: string; confidence: number; source: string | null; created_at: string }>;
}

/** A thread that has a goal, as `GET /api/goals` lists it. */
export interface ThreadGoalInfo {
  thread_id: string;
  /** Where the thread's conversation lives (the thread's `channel_source`), when it came from a chat. */
  conversation: { provider: string; chat_id: string } | null;
  goal: GoalInfo;
}

export interface SetGoalRequest {
  objective: string;
  /** Hidden continuations after one visible turn, 0..8 (default 8); more is refused with 422. */
  max_continuations?: number;
}

/**
 * The agent as the manager and the gateway see it: the subset of the LangGraph Platform API that
 * `@langchain/langgraph-sdk` speaks, in its wire shapes (snake_case), so the embedded runtime, the
 * HTTP gateway and a remote LangGraph server are interchangeable.
 */

export type RunStatus = 'pending' | 'running' | 'success' | 'error' | 'timeout' | 'interrupted';

export interface ThreadInfo {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status: 'idle' | 'busy' | 'interrupted' | 'error';
  /** Latest state values (messages serialized as LangGraph message dicts), or null before any run. */
  values: Record<string, unknown> | null;
  interrupts: Record<string, unknown>;
}

export interface RunInfo {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: RunStatus;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  multitask_strategy: 'reject';
  kwargs: Record<string, unknown>;
}

export interface InputMessage {
  role: 'human' | 'user';
  content: string;
  additional_kwargs?: Record<string, unknown>;
}

export type StreamMode = 'values' | 'messages' | 'messages-tuple' | 'updates' | 'custom';

export interface RunRequest {
  assistant_id: string;
  input?: { messages: InputMessage[] } | null;
  config?: { recursion_limit?: number; configurable?: Record<string, unknown>; tags?: string[] };
  context?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  /** Only `reject` is supported: a thread runs one thing at a time. */
  multitask_strategy?: 'reject';
  stream_mode?: StreamMode[];
}

/** One server-sent event of a run stream: `event: <event>\ndata: <json>`. */
export interface StreamPart {
  event: string;
  data: unknown;
}

export interface RunStream {
  run: RunInfo;
  /** Ends when the run ends; a failure arrives as a final `error` part, never as a throw. */
  events: AsyncIterable<StreamPart>;
}

export interface CreateThreadRequest {
  thread_id?: string;
  metadata?: Record<string, unknown>;
  /** `raise` (default) fails with ConflictError on an existing id; `do_nothing` returns it. */
  if_exists?: 'raise' | 'do_nothing';
}

export interface ModelInfo {
  name: string;
  model: string;
  /** Whether it thinks before answering, where the config sets it (`models[].thinking`). */
  thinking?: 'on' | 'off';
  /** It reads pictures (`models[].supports_vision`). */
  supports_vision?: boolean;
}

export interface RunOptions {
  /** Aborting cancels the run (status `interrupted`). */
  signal?: AbortSignal;
  /**
   * Environment variables for this run's shell commands only (a GitHub installation token as
   * `GH_TOKEN`). Never part of the request: not stored with the run, not in its state or
   * checkpoints, not shown to the model; masked in command output.
   */
  sandboxSecrets?: Record<string, string>;
  /** Plain environment variables for this run's shell commands only (`GH_HOST`); not masked, not stored. */
  sandboxVariables?: Record<string, string>;
}

/**
 * Everything here throws `AppError`s: `NotFoundError` for unknown ids, `ThreadBusyError` when the
 * thread already has an active run, `AgentError('MODEL_NOT_CONFIGURED')` when no model exists.
 */
export interface AgentRuntime {
  createThread(request?: CreateThreadRequest): Promise<ThreadInfo>;
  /** The thread with its latest values; `withValues: false` skips reading them (`values` is then null), for callers that need only its metadata. */
  getThread(threadId: string, options?: { withValues?: boolean }): Promise<ThreadInfo>;
  /** Resolves once the run is admitted (so a busy thread rejects before any event). */
  streamRun(threadId: string, request: RunRequest, options?: RunOptions): Promise<RunStream>;
  /** Runs to the end; resolves with the final state values. A failed run rejects with AgentError. */
  waitRun(threadId: string, request: RunRequest, options?: RunOptions): Promise<{ run: RunInfo; values: Record<string, unknown> }>;
  /** Resolves once the run is pending; it goes on in the background. */
  createRun(threadId: string, request: RunRequest, options?: Pick<RunOptions, 'sandboxSecrets' | 'sandboxVariables'>): Promise<RunInfo>;
  getRun(threadId: string, runId: string): Promise<RunInfo>;
  /**
   * Resolves with the run once it has ended (`runs.join`), wherever it runs; at once for a
   * finished run. Rejects with `RUN_CANCELLED` when `signal` aborts the wait (the run goes on).
   */
  joinRun(threadId: string, runId: string, options?: Pick<RunOptions, 'signal'>): Promise<RunInfo>;
  /** Cancels an active run; with `wait`, resolves after it stopped. No-op for finished runs. */
  cancelRun(threadId: string, runId: string, options?: { wait?: boolean }): Promise<void>;
  models(): ModelInfo[];
  /** The thread's active goal, or null. NotFoundError for an unknown thread. */
  getGoal(threadId: string): Promise<GoalInfo | null>;
  /**
   * Sets (or replaces) the thread's goal; the next visible turn is judged against it. 422 for an
   * empty objective, one over 4000 characters or more than 8 continuations; 409 when goals are off.
   */
  setGoal(threadId: string, request: SetGoalRequest): Promise<GoalInfo>;
  /** Clears the thread's goal; true when there was one. */
  clearGoal(threadId: string): Promise<boolean>;
  /**
   * Threads with an active goal, most recently changed first, at most `limit`: only those whose
   * owner (thread metadata `owner_user_id`) is `ownerUserId` when given, every one when not.
   */
  listGoals(options: { ownerUserId?: string; limit: number }): Promise<ThreadGoalInfo[]>;
  /** The memory of a storage user (empty when nothing is known). */
  getMemory(userId: string): Promise<MemoryInfo>;
  /** Forgets everything about a user; resolves with the number of facts removed. */
  clearMemory(userId: string): Promise<number>;
  /** Forgets one of the user's facts; false when the user has no fact with that id (another's included). */
  deleteMemoryFact(userId: string, factId: string): Promise<boolean>;
  /** Stops every active run and releases resources. */
  close(): Promise<void>;
}

/** The assistant id every run uses; custom agents ride on it through `context.agent_name`. */
export const LEAD_AGENT_ID = 'lead_agent';

/** The user of runs and memory calls that name none (DeerFlow's no-auth user). */
export const DEFAULT_USER_ID = 'default';
