import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { ConflictError, NotFoundError, ThreadBusyError } from '../../../src/errors.js';
import { buildApp } from '../../../src/gateway/app.js';
import type { GatewayDeps, HealthReport } from '../../../src/gateway/types.js';
import { createLogger } from '../../../src/logger.js';
import type {
  AgentRuntime,
  CreateThreadRequest,
  GoalInfo,
  MemoryInfo,
  ModelInfo,
  RunInfo,
  RunOptions,
  RunRequest,
  RunStream,
  SetGoalRequest,
  StreamPart,
  ThreadGoalInfo,
  ThreadInfo,
} from '../../../src/runtime/types.js';

/**
 * An in-memory `AgentRuntime` for gateway unit tests: threads and runs in maps, a thread is busy
 * while listed in `busy`, and each run call can be overridden. It records what the gateway passed.
 */
export class StubRuntime implements AgentRuntime {
  readonly threads = new Map<string, ThreadInfo>();
  readonly runs = new Map<string, RunInfo>();
  readonly busy = new Set<string>();
  readonly calls: { method: string; threadId?: string; request?: RunRequest; options?: RunOptions | { wait?: boolean } }[] = [];
  parts: StreamPart[] = [{ event: 'values', data: { messages: [] } }];
  /** Replaces the event stream of `streamRun`, e.g. to hold it open. */
  events?: (signal: AbortSignal | undefined) => AsyncIterable<StreamPart>;
  waitResult: () => Promise<Record<string, unknown>> = async () => ({ messages: [{ type: 'ai', content: 'hi' }] });
  modelList: ModelInfo[] = [{ name: 'default', model: 'gpt-4o-mini' }];
  /** Thrown by every method when set, to test the error handler. */
  failure?: unknown;

  readonly goals = new Map<string, GoalInfo>();
  readonly memories = new Map<string, MemoryInfo>();

  async getMemory(userId: string): Promise<MemoryInfo> {
    this.check();
    this.calls.push({ method: 'getMemory' });
    return this.memories.get(userId) ?? { user_id: userId, summaries: { work_context: '', personal_context: '', top_of_mind: '' }, facts: [] };
  }

  async clearMemory(userId: string): Promise<number> {
    this.check();
    this.calls.push({ method: 'clearMemory' });
    const count = this.memories.get(userId)?.facts.length ?? 0;
    this.memories.delete(userId);
    return count;
  }

  async deleteMemoryFact(userId: string, factId: string): Promise<boolean> {
    this.check();
    this.calls.push({ method: 'deleteMemoryFact' });
    const memory = this.memories.get(userId);
    const kept = memory?.facts.filter((fact) => fact.id !== factId) ?? [];
    if (!memory || kept.length === memory.facts.length) return false;
    this.memories.set(userId, { ...memory, facts: kept });
    return true;
  }

  async listGoals(options: { ownerUserId?: string; limit: number }): Promise<ThreadGoalInfo[]> {
    this.check();
    this.calls.push({ method: 'listGoals' });
    return [...this.goals]
      .filter(([threadId]) => options.ownerUserId === undefined || this.threads.get(threadId)?.metadata.owner_user_id === options.ownerUserId)
      .slice(0, options.limit)
      .map(([threadId, goal]) => ({ thread_id: threadId, conversation: null, goal }));
  }

  async getGoal(threadId: string): Promise<GoalInfo | null> {
    this.check();
    this.calls.push({ method: 'getGoal', threadId });
    if (!this.threads.has(threadId)) throw new NotFoundError('Thread');
    return this.goals.get(threadId) ?? null;
  }

  async setGoal(threadId: string, request: SetGoalRequest): Promise<GoalInfo> {
    this.check();
    this.calls.push({ method: 'setGoal', threadId });
    if (!this.threads.has(threadId)) throw new NotFoundError('Thread');
    const now = new Date(0).toISOString();
    const goal: GoalInfo = {
      objective: request.objective,
      max_continuations: request.max_continuations ?? 8,
      last_evaluation: null,
      created_at: now,
      updated_at: now,
    };
    this.goals.set(threadId, goal);
    return goal;
  }

  async clearGoal(threadId: string): Promise<boolean> {
    this.check();
    this.calls.push({ method: 'clearGoal', threadId });
    return this.goals.delete(threadId);
  }

  async createThread(request: CreateThreadRequest = {}): Promise<ThreadInfo> {
    this.check();
    this.calls.push({ method: 'createThread' });
    const id = request.thread_id ?? randomUUID();
    const existing = this.threads.get(id);
    if (existing) {
      if (request.if_exists === 'do_nothing') return existing;
      throw new ConflictError('Thread already exists.');
    }
    const now = new Date(0).toISOString();
    const thread: ThreadInfo = {
      thread_id: id,
      created_at: now,
      updated_at: now,
      metadata: request.metadata ?? {},
      status: 'idle',
      values: null,
      interrupts: {},
    };
    this.threads.set(id, thread);
    return thread;
  }

  async getThread(threadId: string): Promise<ThreadInfo> {
    this.check();
    const thread = this.threads.get(threadId);
    if (!thread) throw new NotFoundError('Thread');
    return thread;
  }

  async streamRun(threadId: string, request: RunRequest, options?: RunOptions): Promise<RunStream> {
    const run = await this.admit('streamRun', threadId, request, options);
    const events = this.events ? this.events(options?.signal) : toAsync(this.parts);
    return { run, events };
  }

  async waitRun(threadId: string, request: RunRequest, options?: RunOptions) {
    const run = await this.admit('waitRun', threadId, request, options);
    return { run, values: await this.waitResult() };
  }

  async createRun(threadId: string, request: RunRequest): Promise<RunInfo> {
    return this.admit('createRun', threadId, request);
  }

  async getRun(threadId: string, runId: string): Promise<RunInfo> {
    this.check();
    const run = this.runs.get(runId);
    if (!run || run.thread_id !== threadId) throw new NotFoundError('Run');
    return run;
  }

  async joinRun(threadId: string, runId: string): Promise<RunInfo> {
    return this.getRun(threadId, runId);
  }

  async cancelRun(threadId: string, runId: string, options?: { wait?: boolean }): Promise<void> {
    this.calls.push({ method: 'cancelRun', threadId, options: options ?? {} });
    const run = await this.getRun(threadId, runId);
    run.status = 'interrupted';
  }

  models(): ModelInfo[] {
    this.check();
    return this.modelList;
  }

  async close(): Promise<void> {}

  private check(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private async admit(method: string, threadId: string, request: RunRequest, options?: RunOptions): Promise<RunInfo> {
    this.check();
    this.calls.push({ method, threadId, request, ...(options ? { options } : {}) });
    await this.getThread(threadId);
    if (this.busy.has(threadId)) throw new ThreadBusyError(threadId);
    const now = new Date(0).toISOString();
    const run: RunInfo = {
      run_id: randomUUID(),
      thread_id: threadId,
      assistant_id: request.assistant_id,
      status: 'pending',
      created_at: now,
      updated_at: now,
      metadata: request.metadata ?? {},
      multitask_strategy: 'reject',
      kwargs: {},
    };
    this.runs.set(run.run_id, run);
    return run;
  }
}

async function* toAsync(parts: StreamPart[]): AsyncIterable<StreamPart> {
  for (const part of parts) yield part;
}

export const healthyReport: HealthReport = {
  ok: true,
  database: { ok: true, kind: 'pglite' },
  bus: { ok: true, kind: 'in-process' },
  channels: { telegram: { running: true } },
  model: { configured: true, models: ['default'] },
};

/** Log lines the app wrote, parsed. */
export type LogLines = Record<string, unknown>[];

/** `buildApp` over a stub runtime with a logger whose lines the test can read. */
export async function buildTestApp(overrides: Partial<GatewayDeps> = {}) {
  const runtime = overrides.runtime instanceof StubRuntime ? overrides.runtime : new StubRuntime();
  const logs: LogLines = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(JSON.parse(String(chunk)));
      callback();
    },
  });
  const app = await buildApp({
    runtime,
    health: async () => healthyReport,
    logger: createLogger({ level: 'debug', destination }),
    ...overrides,
  });
  return { app, runtime, logs };
}
