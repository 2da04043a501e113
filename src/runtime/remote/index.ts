import { Client } from '@langchain/langgraph-sdk/client';
import { AgentError, AppError, ConfigError, describeError, NotFoundError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { apiRootProblem } from '../config.js';
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
} from '../types.js';
import {
  type CallContext,
  fromFailedCall,
  fromHttpStatus,
  remoteMessages,
  remoteStreamModes,
  runFailureError,
  StreamPartTranslator,
  toModelInfos,
  toRunFailure,
  unavailableError,
} from './wire.js';

export interface RemoteRuntimeOptions {
  /** The remote server's API root, e.g. http://other-host:8001/api (ours), a DeerFlow gateway, or LangGraph Platform. */
  url: string;
  /** Sent as the SDK's apiKey (x-api-key) and as `Authorization: Bearer <key>` (our gateway reads the bearer). Optional. */
  apiKey?: string;
  logger: Logger;
  /** ms; default 30 s for ordinary calls. Runs themselves are not bounded by it. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** `models()` asks the remote again at most this often. */
const MODELS_REFRESH_MS = 60_000;
/** How often `joinRun` looks at a run on a server that has no `join` route (ours). */
const JOIN_POLL_MS = 500;
/**
 * One more attempt after a refused connection, or a 5xx to a read (a server restarting); the
 * SDK's default (4, with growing pauses) would keep a chat waiting for half a minute per call.
 */
const SDK_RETRIES = 1;

type RemotePart = { event: string; data: unknown };

/**
 * The agent on another server: our own gateway, a DeerFlow gateway or LangGraph Platform, spoken
 * to through `@langchain/langgraph-sdk`, and plain `fetch` for the routes it has no call for
 * (models, goals, memory). Loads the remote's model list once before resolving; a server that
 * cannot be reached then only costs that list (empty until a later refresh succeeds).
 *
 * @throws ConfigError when `url` is not an http(s) URL.
 */
export async function createRemoteRuntime(options: RemoteRuntimeOptions): Promise<AgentRuntime> {
  const runtime = new RemoteRuntime(options, parseApiRoot(options.url));
  await runtime.refreshModels();
  return runtime;
}

function parseApiRoot(url: string): URL {
  const problem = apiRootProblem(url);
  if (problem !== undefined) throw new ConfigError([`url: ${problem}`]);
  return new URL(url);
}

class RemoteRuntime implements AgentRuntime {
  private readonly client: Client;
  /** The API root without a trailing slash; paths are appended to it. */
  private readonly apiRoot: string;
  /** Host and port only: what users and logs are told, never credentials in the URL. */
  private readonly host: string;
  private readonly timeoutMs: number;
  private readonly logger: Logger;
  /** Aborted by `close()`: every request in flight here ends with it. */
  private readonly closing = new AbortController();
  private modelList: ModelInfo[] = [];
  private modelsAskedAt = Number.NEGATIVE_INFINITY;
  private modelsLoading: Promise<void> | undefined;
  private isSandboxEnvironmentNoted = false;
  /** Set once the remote answered `join` with 404/405: it has no such route, so `joinRun` polls. */
  private hasNoJoinRoute = false;

  constructor(
    private readonly options: RemoteRuntimeOptions,
    apiRoot: URL,
  ) {
    this.apiRoot = apiRoot.href.replace(/\/+$/, '');
    this.host = apiRoot.host;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.logger = options.logger.child({ component: 'remote-runtime', host: this.host });
    this.client = new Client({
      apiUrl: this.apiRoot,
      // null, not undefined: the SDK would otherwise pick up LANGGRAPH_API_KEY and the like from the environment.
      apiKey: options.apiKey ?? null,
      timeoutMs: this.timeoutMs,
      defaultHeaders: this.authorization(),
      // Waits and joins hold a slot of the SDK's queue for the whole run; its default of 4 would
      // make a fifth concurrent chat wait for one of them.
      callerOptions: { maxRetries: SDK_RETRIES, maxConcurrency: Number.POSITIVE_INFINITY, fetch: fetchWithoutRedirects },
    });
  }

  async createThread(request: CreateThreadRequest = {}): Promise<ThreadInfo> {
    const context: CallContext = { operation: 'POST /threads', subject: 'Thread' };
    const thread = await this.call(context, (signal) =>
      this.client.threads.create({
        ...(request.thread_id === undefined ? {} : { threadId: request.thread_id }),
        ...(request.metadata === undefined ? {} : { metadata: request.metadata }),
        ...(request.if_exists === undefined ? {} : { ifExists: request.if_exists }),
        signal,
      }),
    );
    return thread as unknown as ThreadInfo;
  }

  async getThread(threadId: string, options: { withValues?: boolean } = {}): Promise<ThreadInfo> {
    const context: CallContext = { operation: 'GET /threads/:thread_id', subject: 'Thread' };
    const thread = (await this.call(context, (signal) => this.client.threads.get(threadId, { signal }))) as unknown as ThreadInfo;
    // The API has no way to leave the values out; the contract says they are then null.
    return options.withValues === false ? { ...thread, values: null } : thread;
  }

  async streamRun(threadId: string, request: RunRequest, options: RunOptions = {}): Promise<RunStream> {
    this.noteSandboxEnvironment(options);
    const context: CallContext = { operation: 'POST /threads/:thread_id/runs/stream', subject: 'Thread', admitsRunOn: threadId };
    if (options.signal?.aborted) throw runCancelled();
    const connection = new AbortController();
    let runId: string | undefined;
    const onAbort = () => {
      connection.abort();
      if (runId !== undefined) this.cancelQuietly(threadId, runId);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const stopListening = () => options.signal?.removeEventListener('abort', onAbort);
    const parts = this.client.runs.stream(threadId, request.assistant_id, {
      ...runPayload(request),
      streamMode: remoteStreamModes(request.stream_mode),
      // Like an embedded stream nobody reads to the end, a dropped connection leaves the run
      // going; only the caller's signal cancels it (below, by id).
      onDisconnect: 'continue',
      signal: AbortSignal.any([connection.signal, this.closing.signal]),
      onRunCreated: (created) => {
        runId = created.run_id;
      },
    }) as AsyncGenerator<RemotePart>;
    // The first event comes after the remote admitted the run (or refused it: busy, unknown thread).
    let first: IteratorResult<RemotePart>;
    try {
      first = await parts.next();
    } catch (error) {
      stopListening();
      throw this.failure(error, context, options.signal);
    }
    runId ??= runIdOfMetadata(first);
    if (options.signal?.aborted || this.closing.signal.aborted || runId === undefined) {
      stopListening();
      connection.abort();
      if (options.signal?.aborted) throw runCancelled();
      if (this.closing.signal.aborted) throw closedError();
      throw unavailableError(this.host, `agent server ${this.host} streamed a run without naming it`);
    }
    const run = await this.admittedRun(threadId, runId, request);
    return { run, events: this.relay(parts, first, { connection, signal: options.signal, stopListening }) };
  }

  async waitRun(threadId: string, request: RunRequest, options: RunOptions = {}): Promise<{ run: RunInfo; values: Record<string, unknown> }> {
    this.noteSandboxEnvironment(options);
    const context: CallContext = { operation: 'POST /threads/:thread_id/runs/wait', subject: 'Thread', admitsRunOn: threadId };
    if (options.signal?.aborted) throw runCancelled();
    const connection = new AbortController();
    let runId: string | undefined;
    const onAbort = () => {
      connection.abort();
      if (runId !== undefined) this.cancelQuietly(threadId, runId);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let answer: unknown;
    try {
      answer = await this.client.runs.wait(threadId, request.assistant_id, {
        ...runPayload(request),
        // Our gateway names the run only with the result, too late to cancel it by id: a caller
        // who may abort has the server cancel the run when the connection drops instead.
        onDisconnect: options.signal === undefined ? 'continue' : 'cancel',
        raiseError: false,
        signal: AbortSignal.any([connection.signal, this.closing.signal]),
        onRunCreated: (created) => {
          runId = created.run_id;
        },
      });
    } catch (error) {
      throw this.failure(error, context, options.signal);
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
    const values = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>;
    if ('__error__' in values) throw runFailureError(toRunFailure(values.__error__));
    // A server without `Content-Location` never says which run it was.
    const run = runId === undefined ? assumedRun(threadId, '', request, 'success') : await this.admittedRun(threadId, runId, request, 'success');
    return { run, values };
  }

  async createRun(threadId: string, request: RunRequest, options: Pick<RunOptions, 'sandboxSecrets' | 'sandboxVariables'> = {}): Promise<RunInfo> {
    this.noteSandboxEnvironment(options);
    const context: CallContext = { operation: 'POST /threads/:thread_id/runs', subject: 'Thread', admitsRunOn: threadId };
    const run = await this.call(context, (signal) =>
      this.client.runs.create(threadId, request.assistant_id, {
        ...runPayload(request),
        ...(request.stream_mode === undefined ? {} : { streamMode: remoteStreamModes(request.stream_mode) }),
        signal,
      }),
    );
    return run as unknown as RunInfo;
  }

  async getRun(threadId: string, runId: string): Promise<RunInfo> {
    const context: CallContext = { operation: 'GET /threads/:thread_id/runs/:run_id', subject: 'Run' };
    const run = await this.call(context, (signal) => this.client.runs.get(threadId, runId, { signal }));
    return run as unknown as RunInfo;
  }

  async joinRun(threadId: string, runId: string, options: Pick<RunOptions, 'signal'> = {}): Promise<RunInfo> {
    const context: CallContext = { operation: 'GET /threads/:thread_id/runs/:run_id/join', subject: 'Run' };
    const waiting = AbortSignal.any([this.closing.signal, ...(options.signal ? [options.signal] : [])]);
    const ended = (run: RunInfo) => run.status !== 'pending' && run.status !== 'running';
    for (;;) {
      if (options.signal?.aborted) throw waitCancelled();
      // Asked first, so an unknown run is a NotFoundError and a finished one answers at once.
      const run = await this.getRun(threadId, runId);
      if (ended(run)) return run;
      try {
        if (this.hasNoJoinRoute) await sleep(JOIN_POLL_MS, waiting);
        else await this.client.runs.join(threadId, runId, { signal: waiting });
      } catch (error) {
        if (options.signal?.aborted) throw waitCancelled();
        if (this.closing.signal.aborted) throw closedError();
        // The run exists (asked just now), so a 404 or 405 means the route does not.
        const status = (error as { status?: unknown }).status;
        if (status !== 404 && status !== 405) throw fromFailedCall(error, this.host, context);
        this.hasNoJoinRoute = true;
        this.logger.debug('the agent server has no join route; waiting for runs by polling');
      }
    }
  }

  async cancelRun(threadId: string, runId: string, options: { wait?: boolean } = {}): Promise<void> {
    const context: CallContext = { operation: 'POST /threads/:thread_id/runs/:run_id/cancel', subject: 'Run' };
    try {
      await this.call(context, (signal) => this.client.runs.cancel(threadId, runId, options.wait ?? false, 'interrupt', { signal }));
    } catch (error) {
      // LangGraph Platform refuses to cancel a finished run; the contract makes that a no-op.
      if (!(error instanceof AppError && error.status === 409)) throw error;
      const run = await this.getRun(threadId, runId);
      if (run.status === 'pending' || run.status === 'running') throw error;
    }
  }

  models(): ModelInfo[] {
    if (this.modelsLoading === undefined && Date.now() - this.modelsAskedAt >= MODELS_REFRESH_MS) void this.refreshModels();
    return this.modelList;
  }

  /** Loads `GET /models`; never rejects: a failure keeps the list it had (empty at first) and is logged. */
  refreshModels(): Promise<void> {
    if (this.closing.signal.aborted) return Promise.resolve();
    this.modelsAskedAt = Date.now();
    this.modelsLoading ??= this.fetchJson('GET', '/models', { operation: 'GET /models', subject: 'Models route' })
      .then((body) => {
        const models = toModelInfos(body);
        if (models === undefined) throw unavailableError(this.host, `agent server ${this.host} answered GET /models without a model list`);
        this.modelList = models;
      })
      .catch((error: unknown) => {
        if (this.closing.signal.aborted) return;
        this.logger.warn({ err: describeError(error), models: this.modelList.length }, 'could not load the agent server models; will try again');
      })
      .finally(() => {
        this.modelsLoading = undefined;
      });
    return this.modelsLoading;
  }

  async getGoal(threadId: string): Promise<GoalInfo | null> {
    const context: CallContext = { operation: 'GET /threads/:thread_id/goal', subject: 'Thread' };
    const body = (await this.fetchJson('GET', goalPath(threadId), context)) as { goal?: GoalInfo | null };
    return body.goal ?? null;
  }

  async setGoal(threadId: string, request: SetGoalRequest): Promise<GoalInfo> {
    const context: CallContext = { operation: 'PUT /threads/:thread_id/goal', subject: 'Thread' };
    const body = (await this.fetchJson('PUT', goalPath(threadId), context, request)) as { goal?: GoalInfo | null };
    if (!body.goal) throw unavailableError(this.host, `agent server ${this.host} answered PUT goal without the goal`);
    return body.goal;
  }

  async clearGoal(threadId: string): Promise<boolean> {
    // DELETE answers `{ goal: null }` whether or not there was one, so whether there was is asked
    // first (a goal set in between is cleared but not counted). An unknown thread has none, as
    // in the embedded runtime.
    const existing = await this.getGoal(threadId).catch((error: unknown) => {
      if (error instanceof NotFoundError) return null;
      throw error;
    });
    await this.fetchJson('DELETE', goalPath(threadId), { operation: 'DELETE /threads/:thread_id/goal', subject: 'Thread' });
    return existing !== null;
  }

  async listGoals(options: { ownerUserId?: string; limit: number }): Promise<ThreadGoalInfo[]> {
    const query = new URLSearchParams({ limit: String(options.limit), ...(options.ownerUserId === undefined ? {} : { user_id: options.ownerUserId }) });
    const body = (await this.fetchJson('GET', `/goals?${query}`, { operation: 'GET /goals', subject: 'Goals route' })) as { goals?: ThreadGoalInfo[] };
    // Only the runtime's own fields: what the remote gateway adds (its `status`) is for its callers.
    return (body.goals ?? []).map(({ thread_id, conversation, goal }) => ({ thread_id, conversation, goal }));
  }

  async getMemory(userId: string): Promise<MemoryInfo> {
    const body = await this.fetchJson('GET', memoryPath(userId), { operation: 'GET /memory', subject: 'Memory route' });
    return body as MemoryInfo;
  }

  async clearMemory(userId: string): Promise<number> {
    const body = (await this.fetchJson('DELETE', memoryPath(userId), { operation: 'DELETE /memory', subject: 'Memory route' })) as { removed?: unknown };
    return typeof body.removed === 'number' ? body.removed : 0;
  }

  async deleteMemoryFact(userId: string, factId: string): Promise<boolean> {
    const path = `/memory/facts/${encodeURIComponent(factId)}?${new URLSearchParams({ user_id: userId })}`;
    return this.fetchJson('DELETE', path, { operation: 'DELETE /memory/facts/:fact_id', subject: 'Fact' }).then(
      () => true,
      (error: unknown) => {
        if (error instanceof NotFoundError) return false;
        throw error;
      },
    );
  }

  /** Runs on the remote go on: they belong to that server. Only this side's requests end. */
  async close(): Promise<void> {
    this.closing.abort();
    await this.modelsLoading;
  }

  /** An ordinary SDK call (the SDK bounds it by `timeoutMs`), its failure as an `AppError`. */
  private async call<T>(context: CallContext, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
    try {
      return await send(this.closing.signal);
    } catch (error) {
      throw this.failure(error, context);
    }
  }

  /** `fetch` for the routes the SDK has no call for, with the same headers, bound and errors. */
  private async fetchJson(method: 'GET' | 'PUT' | 'DELETE', path: string, context: CallContext, body?: unknown): Promise<unknown> {
    const signal = AbortSignal.any([this.closing.signal, AbortSignal.timeout(this.timeoutMs)]);
    let status: number;
    let text: string;
    try {
      const response = await fetch(`${this.apiRoot}${path}`, {
        method,
        headers: { accept: 'application/json', ...this.authorization(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal,
        redirect: 'error',
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw this.failure(error, context);
    }
    if (status < 200 || status >= 300) throw fromHttpStatus(status, text, this.host, context);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw unavailableError(this.host, `agent server ${this.host} answered ${context.operation} with something other than JSON`);
    }
  }

  private authorization(): Record<string, string> {
    const key = this.options.apiKey;
    return key === undefined || key === '' ? {} : { authorization: `Bearer ${key}`, 'x-api-key': key };
  }

  /** What a call that threw means here: the caller's own abort, this runtime closing, or the remote's answer. */
  private failure(error: unknown, context: CallContext, signal?: AbortSignal): AppError {
    if (signal?.aborted) return runCancelled();
    if (this.closing.signal.aborted) return closedError();
    return fromFailedCall(error, this.host, context);
  }

  /**
   * The run just admitted, as the remote describes it. The run is going by now, so a failure to
   * read it is not the caller's failure: it gets the run as the request described it.
   */
  private async admittedRun(threadId: string, runId: string, request: RunRequest, status: RunInfo['status'] = 'pending'): Promise<RunInfo> {
    try {
      return await this.getRun(threadId, runId);
    } catch (error) {
      this.logger.debug({ runId, err: describeError(error) }, 'could not read the admitted run; describing it from the request');
      return assumedRun(threadId, runId, request, status);
    }
  }

  /**
   * The stream's parts as the embedded runtime sends them, ending like one: with an `error` part
   * when the caller aborted (the run is cancelled remotely), this runtime closed, or the
   * connection broke. A consumer that stops reading closes the connection; the run goes on.
   */
  private async *relay(
    parts: AsyncGenerator<RemotePart>,
    first: IteratorResult<RemotePart>,
    { connection, signal, stopListening }: { connection: AbortController; signal: AbortSignal | undefined; stopListening: () => void },
  ): AsyncGenerator<StreamPart> {
    const translator = new StreamPartTranslator();
    let hasError = false;
    let broke: unknown;
    try {
      for (let next = first; !next.done; next = await parts.next()) {
        for (const part of translator.translate(next.value)) {
          hasError ||= part.event === 'error';
          yield part;
        }
      }
    } catch (error) {
      broke = error;
    } finally {
      stopListening();
      connection.abort();
      await parts.return(undefined).catch(() => undefined);
    }
    if (hasError) return;
    if (signal?.aborted) {
      yield { event: 'error', data: { error: 'RUN_CANCELLED', message: remoteMessages.runCancelled } };
    } else if (this.closing.signal.aborted) {
      yield { event: 'error', data: { error: 'INTERNAL', message: remoteMessages.closed } };
    } else if (broke !== undefined) {
      this.logger.warn({ err: describeError(broke) }, 'run stream from the agent server broke');
      yield { event: 'error', data: { error: 'INTERNAL', message: remoteMessages.streamBroken(this.host) } };
    }
  }

  /** Cancels a run the caller gave up on; a failure is logged, the caller has moved on. */
  private cancelQuietly(threadId: string, runId: string): void {
    this.cancelRun(threadId, runId).catch((error: unknown) => {
      this.logger.warn({ threadId, runId, err: describeError(error) }, 'could not cancel the run on the agent server');
    });
  }

  /** Shell secrets and variables are this process's, handed to its own sandbox; they never go over the wire. */
  private noteSandboxEnvironment(options: Pick<RunOptions, 'sandboxSecrets' | 'sandboxVariables'>): void {
    if (this.isSandboxEnvironmentNoted) return;
    const count = Object.keys(options.sandboxSecrets ?? {}).length + Object.keys(options.sandboxVariables ?? {}).length;
    if (count === 0) return;
    this.isSandboxEnvironmentNoted = true;
    this.logger.debug('sandbox secrets and variables stay on this server; runs on the agent server do not get them');
  }
}

/**
 * `fetch` that refuses redirects: a redirect would carry `x-api-key` (which, unlike
 * `Authorization`, fetch keeps across origins) to wherever it points. The API root must be the
 * final URL; a redirect reads as unreachable, and the log says why.
 */
function fetchWithoutRedirects(input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> {
  return fetch(input, { ...init, redirect: 'error' });
}

/** The run request's fields as the SDK's payload names them (it sends them snake_case again). */
function runPayload(request: RunRequest) {
  return {
    ...(request.input === undefined ? {} : { input: request.input }),
    ...(request.config === undefined ? {} : { config: request.config }),
    ...(request.context === undefined ? {} : { context: request.context }),
    ...(request.metadata === undefined ? {} : { metadata: request.metadata }),
    ...(request.multitask_strategy === undefined ? {} : { multitaskStrategy: request.multitask_strategy }),
  };
}

/** A server that sends no `Content-Location` still names the run in its first event. */
function runIdOfMetadata(first: IteratorResult<RemotePart>): string | undefined {
  if (first.done || first.value.event !== 'metadata') return undefined;
  const runId = (first.value.data as { run_id?: unknown } | null)?.run_id;
  return typeof runId === 'string' ? runId : undefined;
}

/** A run as its request described it, when the remote could not be asked. */
function assumedRun(threadId: string, runId: string, request: RunRequest, status: RunInfo['status']): RunInfo {
  const now = new Date().toISOString();
  return {
    run_id: runId,
    thread_id: threadId,
    assistant_id: request.assistant_id,
    status,
    created_at: now,
    updated_at: now,
    metadata: request.metadata ?? {},
    multitask_strategy: 'reject',
    kwargs: {},
  };
}

function goalPath(threadId: string): string {
  return `/threads/${encodeURIComponent(threadId)}/goal`;
}

function memoryPath(userId: string): string {
  return `/memory?${new URLSearchParams({ user_id: userId })}`;
}

function runCancelled(): AgentError {
  return new AgentError('RUN_CANCELLED', 'run cancelled', { status: 409, userMessage: remoteMessages.runCancelled });
}

function waitCancelled(): AgentError {
  return new AgentError('RUN_CANCELLED', 'wait cancelled', { status: 409, userMessage: remoteMessages.waitCancelled });
}

function closedError(): AppError {
  return new AppError('INTERNAL', 'remote runtime closed', { status: 503, userMessage: remoteMessages.closed });
}

/** Resolves after `ms`, or rejects as soon as `signal` aborts; the timer never keeps the process alive. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    timer.unref();
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
