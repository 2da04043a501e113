/**
 * The remote runtime against our own gateway, served by the real embedded runtime (LangGraph +
 * database) on the fake OpenAI model: what the manager sees through it must be what it sees
 * through the embedded runtime itself.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { modelConfigSchema } from '../../../src/agent/config.js';
import { GoalStore } from '../../../src/agent/goals/index.js';
import { MemoryStore } from '../../../src/agent/memory/index.js';
import { UsersRepo } from '../../../src/db/repos/users-repo.js';
import { AppError, ConflictError, NotFoundError, ThreadBusyError } from '../../../src/errors.js';
import { buildApp } from '../../../src/gateway/app.js';
import { createAuthenticator } from '../../../src/gateway/auth.js';
import type { GatewayDeps } from '../../../src/gateway/types.js';
import { silentLogger } from '../../../src/logger.js';
import { StreamText } from '../../../src/manager/stream-text.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import { createRemoteRuntime } from '../../../src/runtime/remote/index.js';
import { type AgentRuntime, LEAD_AGENT_ID, type RunRequest, type StreamPart } from '../../../src/runtime/types.js';
import { FakeOpenAI } from '../../fakes/openai/index.js';
import { closedPort } from '../../helpers/closed-port.js';
import { openTestDatabase } from '../../helpers/database.js';

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));
const ADMIN_TOKEN = 'remote-runtime-admin-token-0123456789';
const logger = silentLogger();

let fake: FakeOpenAI;
let database: Awaited<ReturnType<typeof openTestDatabase>>;
let embedded: AgentRuntime;
/** The gateway without keys, and one that requires the operator's token. */
let openGateway: FastifyInstance;
let keyedGateway: FastifyInstance;
let remote: AgentRuntime;
/** Every remote runtime a test makes, closed after all of them. */
const remotes: AgentRuntime[] = [];
let threadId: string;

function apiUrl(app: FastifyInstance): string {
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/api`;
}

async function openRemote(url: string, apiKey?: string): Promise<AgentRuntime> {
  const runtime = await createRemoteRuntime({ url, logger, ...(apiKey === undefined ? {} : { apiKey }) });
  remotes.push(runtime);
  return runtime;
}

async function listeningGateway(runtime: AgentRuntime, auth?: GatewayDeps['auth']): Promise<FastifyInstance> {
  const app = await buildApp({
    runtime,
    logger,
    ...(auth === undefined ? {} : { auth }),
    health: async () => ({
      ok: true,
      database: { ok: true, kind: database.kind },
      bus: { ok: true, kind: 'in-process' },
      channels: {},
      model: { configured: true, models: ['default'] },
    }),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}

beforeAll(async () => {
  fake = new FakeOpenAI();
  await fake.start();
  database = await openTestDatabase();
  embedded = await createEmbeddedRuntime({
    db: database.db,
    models: [modelConfigSchema.parse({ name: 'default', model: 'gpt-4o-mini', base_url: fake.baseURL, api_key: 'sk-fake', max_retries: 0 })],
    agentsDir: AGENTS_DIR,
    logger,
    goals: { store: new GoalStore(database.db), config: { enabled: true, max_continuations: 8 } },
  });
  openGateway = await listeningGateway(embedded);
  keyedGateway = await listeningGateway(embedded, {
    authenticator: createAuthenticator({ adminToken: ADMIN_TOKEN, users: new UsersRepo(database.db) }),
    isPrincipalRequired: true,
  });
  remote = await openRemote(apiUrl(openGateway));
});

afterAll(async () => {
  // Each step runs even when one before it failed; the first failure is reported at the end.
  const failures: unknown[] = [];
  const steps: Array<() => Promise<unknown> | undefined> = [
    ...remotes.map((runtime) => () => runtime.close()),
    ...[openGateway, keyedGateway].map((app) => () => {
      // Undici keeps spare sockets open; without this, close() waits for them to time out.
      app?.server.closeAllConnections();
      return app?.close();
    }),
    () => embedded?.close(),
    () => database?.close(),
    () => fake?.stop(),
  ];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
});

beforeEach(async () => {
  threadId = (await remote.createThread()).thread_id;
});

function say(text: string, extra: Partial<RunRequest> = {}): RunRequest {
  return { assistant_id: LEAD_AGENT_ID, input: { messages: [{ role: 'human', content: text }] }, ...extra };
}

type WireMessage = { type: string; content: unknown };

function conversation(values: unknown): WireMessage[] {
  return ((values as { messages?: WireMessage[] } | null)?.messages ?? []).map(({ type, content }) => ({ type, content }));
}

async function collect(events: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of events) parts.push(part);
  return parts;
}

/** Starts a background run whose answer takes `chunks` tenths of a second; resolves once the model is answering. */
async function startSlowRun(runtime: AgentRuntime, chunks = 50): Promise<string> {
  const before = fake.requests.length;
  fake.enqueue({ chunks: Array.from({ length: chunks }, () => 'tick '), chunkDelayMs: 100 });
  const run = await runtime.createRun(threadId, say('count slowly'));
  await fake.waitForRequests(before + 1, 5000);
  return run.run_id;
}

const idleWait = { timeout: 10_000, interval: 50 };

describe('threads', () => {
  it('creates and reads threads as the remote has them', async () => {
    const id = crypto.randomUUID();
    const created = await remote.createThread({ thread_id: id, metadata: { chat: 'test' } });
    expect(created).toMatchObject({ thread_id: id, status: 'idle', metadata: { chat: 'test' }, values: null });
    expect(await remote.getThread(id)).toEqual(await embedded.getThread(id));
    expect((await remote.getThread(id, { withValues: false })).values).toBeNull();

    expect((await remote.createThread({ thread_id: id, if_exists: 'do_nothing' })).created_at).toBe(created.created_at);
    await expect(remote.createThread({ thread_id: id })).rejects.toBeInstanceOf(ConflictError);
  });

  it('answers unknown threads and runs with NotFoundError', async () => {
    const unknown = crypto.randomUUID();
    await expect(remote.getThread(unknown)).rejects.toBeInstanceOf(NotFoundError);
    await expect(remote.getRun(threadId, crypto.randomUUID())).rejects.toBeInstanceOf(NotFoundError);
    await expect(remote.streamRun(unknown, say('hi'))).rejects.toBeInstanceOf(NotFoundError);
    await expect(remote.waitRun(unknown, say('hi'))).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('streamRun', () => {
  it("streams the model's answer as the embedded runtime does: messages chunks, then the conversation as values", async () => {
    const answer = 'Hello from the fake model, in pieces.';
    fake.enqueue({ text: answer });
    const { run, events } = await remote.streamRun(threadId, say('hi', { stream_mode: ['messages-tuple', 'values', 'custom'] }));
    expect(run).toMatchObject({ thread_id: threadId, assistant_id: LEAD_AGENT_ID, multitask_strategy: 'reject' });
    const parts = await collect(events);

    expect(parts[0]).toEqual({ event: 'metadata', data: { run_id: run.run_id, attempt: 1 } });
    const streamed = new StreamText();
    const messageParts = parts.filter((part) => part.event === 'messages');
    for (const part of messageParts) streamed.accept(part.data);
    expect(messageParts.length).toBeGreaterThan(1);
    expect(streamed.text).toBe(answer);
    expect(conversation(parts.filter((part) => part.event === 'values').at(-1)?.data)).toEqual([
      { type: 'human', content: 'hi' },
      { type: 'ai', content: answer },
    ]);
    expect(parts.some((part) => part.event === 'error')).toBe(false);
    expect((await remote.getRun(threadId, run.run_id)).status).toBe('success');

    // The same request in-process yields the same kinds of parts in the same order.
    fake.enqueue({ text: answer });
    const local = await embedded.streamRun(threadId, say('hi', { stream_mode: ['messages-tuple', 'values', 'custom'] }));
    expect(parts.map((part) => part.event)).toEqual((await collect(local.events)).map((part) => part.event));
  });

  it("asks for tuples when the caller asks for 'messages'", async () => {
    fake.enqueue({ text: 'tuples please' });
    const { events } = await remote.streamRun(threadId, say('hi', { stream_mode: ['messages'] }));
    const messages = (await collect(events)).filter((part) => part.event === 'messages');
    expect(messages.length).toBeGreaterThan(0);
    for (const part of messages) expect(part.data).toEqual([expect.objectContaining({ content: expect.any(String) }), expect.any(Object)]);
  });

  it('ends with an error part when the model fails, without its text', async () => {
    fake.enqueue({ fail: { status: 400, message: 'context too long, key sk-leak' } });
    const { events } = await remote.streamRun(threadId, say('boom', { stream_mode: ['values'] }));
    const last = (await collect(events)).at(-1);
    expect(last).toEqual({ event: 'error', data: { error: 'MODEL_FAILED', message: expect.any(String) } });
    expect(JSON.stringify(last)).not.toContain('sk-leak');
  });

  it('cancels the run on the remote when the signal aborts, and ends the stream', async () => {
    fake.enqueue({ chunks: Array.from({ length: 50 }, () => 'tick '), chunkDelayMs: 100 });
    const controller = new AbortController();
    const { run, events } = await remote.streamRun(threadId, say('count slowly', { stream_mode: ['messages-tuple'] }), {
      signal: controller.signal,
    });
    const parts: StreamPart[] = [];
    for await (const part of events) {
      parts.push(part);
      if (part.event === 'messages') controller.abort();
    }
    expect(parts.at(-1)).toEqual({ event: 'error', data: { error: 'RUN_CANCELLED', message: 'The run was cancelled.' } });
    await vi.waitFor(async () => expect((await remote.getRun(threadId, run.run_id)).status).toBe('interrupted'), idleWait);
  });
});

describe('waitRun', () => {
  it('resolves with the final values and the finished run', async () => {
    const { run, values } = await remote.waitRun(threadId, say('ping'));
    expect(conversation(values)).toEqual([
      { type: 'human', content: 'ping' },
      { type: 'ai', content: 'Echo: ping' },
    ]);
    expect(run).toMatchObject({ thread_id: threadId, status: 'success' });
  });

  it("rejects with the run's failure as an AgentError, without the model's text", async () => {
    fake.enqueue({ fail: { status: 400, message: 'context too long, key sk-leak' } });
    const failure = await remote.waitRun(threadId, say('boom')).catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: 'AgentError', code: 'MODEL_FAILED', status: 502 });
    expect(JSON.stringify({ message: (failure as AppError).message, userMessage: (failure as AppError).userMessage })).not.toContain('sk-leak');
  });

  it('cancels the run on the remote when the signal aborts', async () => {
    const before = fake.requests.length;
    // Ten seconds of answer: the thread is idle again long before unless the run was cancelled.
    fake.enqueue({ chunks: Array.from({ length: 100 }, () => 'tick '), chunkDelayMs: 100 });
    const controller = new AbortController();
    const waiting = remote.waitRun(threadId, say('count slowly'), { signal: controller.signal });
    await fake.waitForRequests(before + 1, 5000);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'RUN_CANCELLED' });
    await vi.waitFor(async () => expect((await remote.getThread(threadId, { withValues: false })).status).toBe('idle'), {
      timeout: 5000,
      interval: 50,
    });
  });
});

describe('background runs', () => {
  it('creates a run and joins it until it ends', async () => {
    const run = await remote.createRun(threadId, say('background'));
    expect(run).toMatchObject({ thread_id: threadId, assistant_id: LEAD_AGENT_ID });
    expect(['pending', 'running', 'success']).toContain(run.status);
    const joined = await remote.joinRun(threadId, run.run_id);
    expect(joined.status).toBe('success');
    expect(conversation((await remote.getThread(threadId)).values).at(-1)).toEqual({ type: 'ai', content: 'Echo: background' });
    expect(await remote.joinRun(threadId, run.run_id)).toEqual(joined);
  });

  it('stops waiting when the join is aborted, leaving the run going', async () => {
    const runId = await startSlowRun(remote);
    const controller = new AbortController();
    const join = remote.joinRun(threadId, runId, { signal: controller.signal });
    controller.abort();
    await expect(join).rejects.toMatchObject({ code: 'RUN_CANCELLED' });
    expect(['pending', 'running']).toContain((await remote.getRun(threadId, runId)).status);
    await remote.cancelRun(threadId, runId, { wait: true });
  });

  it('cancels a slow run, waiting for it to stop', async () => {
    const runId = await startSlowRun(remote);
    await remote.cancelRun(threadId, runId, { wait: true });
    expect((await remote.getRun(threadId, runId)).status).toBe('interrupted');
    expect((await remote.getThread(threadId, { withValues: false })).status).toBe('idle');
    // A finished run: nothing to do.
    await expect(remote.cancelRun(threadId, runId)).resolves.toBeUndefined();
  });
});

describe('a busy thread', () => {
  it('refuses a second run with ThreadBusyError before any event', async () => {
    const runId = await startSlowRun(remote);
    try {
      await expect(remote.streamRun(threadId, say('again'))).rejects.toBeInstanceOf(ThreadBusyError);
      await expect(remote.waitRun(threadId, say('again'))).rejects.toBeInstanceOf(ThreadBusyError);
      await expect(remote.createRun(threadId, say('again'))).rejects.toBeInstanceOf(ThreadBusyError);
      expect((await remote.getThread(threadId, { withValues: false })).status).toBe('busy');
    } finally {
      await remote.cancelRun(threadId, runId, { wait: true });
    }
  });
});

describe('models, goals and memory', () => {
  it("lists the remote's models", () => {
    expect(remote.models()).toEqual([{ name: 'default', model: 'gpt-4o-mini' }]);
  });

  it('sets, reads and clears a goal as the embedded runtime does', async () => {
    expect(await remote.getGoal(threadId)).toBeNull();
    const goal = await remote.setGoal(threadId, { objective: '  ship   the release ', max_continuations: 3 });
    expect(goal).toMatchObject({ objective: 'ship the release', max_continuations: 3, last_evaluation: null });
    expect(await remote.getGoal(threadId)).toEqual(goal);
    expect(await embedded.getGoal(threadId)).toEqual(goal);
    expect(await remote.clearGoal(threadId)).toBe(true);
    expect(await remote.clearGoal(threadId)).toBe(false);
    expect(await remote.getGoal(threadId)).toBeNull();

    await expect(remote.setGoal(threadId, { objective: 'x', max_continuations: 9 })).rejects.toMatchObject({ status: 422 });
    await expect(remote.getGoal(crypto.randomUUID())).rejects.toBeInstanceOf(NotFoundError);
    expect(await remote.clearGoal(crypto.randomUUID())).toBe(false);
  });

  it("reads and forgets a user's memory", async () => {
    const user = `user-${crypto.randomUUID().slice(0, 8)}`;
    await new MemoryStore(database.db).apply(
      user,
      { summaries: { topOfMind: 'Launching v2.' }, newFacts: [{ content: 'Uses vim', category: 'preference', confidence: 0.9 }], factsToRemove: [] },
      { source: 'thread-1', maxFacts: 100, confidenceThreshold: 0.7, now: new Date() },
    );
    const memory = await remote.getMemory(user);
    expect(memory).toMatchObject({
      user_id: user,
      summaries: { top_of_mind: 'Launching v2.' },
      facts: [{ content: 'Uses vim', category: 'preference', confidence: 0.9, source: 'thread-1' }],
    });
    expect(memory).toEqual(await embedded.getMemory(user));
    expect(await remote.clearMemory(user)).toBe(1);
    expect((await remote.getMemory(user)).facts).toEqual([]);
  });

  it("forgets one fact of a user's memory, and says when there was none", async () => {
    const user = `user-${crypto.randomUUID().slice(0, 8)}`;
    await new MemoryStore(database.db).apply(
      user,
      { summaries: {}, newFacts: [{ content: 'Uses vim', category: 'preference', confidence: 0.9 }, { content: 'Likes tea', category: 'preference', confidence: 0.8 }], factsToRemove: [] },
      { source: 'thread-1', maxFacts: 100, confidenceThreshold: 0.7, now: new Date() },
    );
    const vim = (await remote.getMemory(user)).facts.find((fact) => fact.content === 'Uses vim');
    expect(await remote.deleteMemoryFact(user, vim?.id as string)).toBe(true);
    expect(await remote.deleteMemoryFact(user, vim?.id as string)).toBe(false);
    expect(await remote.deleteMemoryFact('someone-else', crypto.randomUUID())).toBe(false);
    expect((await embedded.getMemory(user)).facts.map((fact) => fact.content)).toEqual(['Likes tea']);
  });

  it('lists the threads with a goal as the embedded runtime does', async () => {
    await remote.setGoal(threadId, { objective: 'write the release notes' });
    try {
      const listed = await remote.listGoals({ limit: 100 });
      expect(listed.find((entry) => entry.thread_id === threadId)).toMatchObject({ goal: { objective: 'write the release notes' } });
      expect(listed).toEqual(await embedded.listGoals({ limit: 100 }));
    } finally {
      await remote.clearGoal(threadId);
    }
  });
});

describe('a gateway that requires a key', () => {
  it('is reached with apiKey, and refuses a runtime without it', async () => {
    const keyed = await openRemote(apiUrl(keyedGateway), ADMIN_TOKEN);
    expect(keyed.models()).toEqual([{ name: 'default', model: 'gpt-4o-mini' }]);
    const thread = await keyed.createThread();
    const { values } = await keyed.waitRun(thread.thread_id, say('with a key'));
    expect(conversation(values).at(-1)).toEqual({ type: 'ai', content: 'Echo: with a key' });
    expect(await keyed.getGoal(thread.thread_id)).toBeNull();

    const keyless = await openRemote(apiUrl(keyedGateway));
    expect(keyless.models()).toEqual([]);
    await expect(keyless.createThread()).rejects.toMatchObject({ code: 'UNAUTHORIZED', status: 503 });
    await expect(keyless.getMemory('default')).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});

describe('an agent server that cannot be reached', () => {
  it('answers every call with a clear sentence that names the host, never the key', async () => {
    const port = await closedPort();
    const secret = 'sk-remote-secret-key-0123456789';
    const unreachable = await openRemote(`http://127.0.0.1:${port}/api`, secret);
    expect(unreachable.models()).toEqual([]);
    const sentence = `The agent server at 127.0.0.1:${port} is not reachable right now. Please try again in a moment.`;
    for (const call of [() => unreachable.createThread(), () => unreachable.streamRun(threadId, say('hi')), () => unreachable.getGoal(threadId)]) {
      const failure = await call().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AppError);
      expect((failure as AppError).userMessage).toBe(sentence);
      expect(`${(failure as AppError).message} ${(failure as AppError).userMessage}`).not.toContain(secret);
    }
  });
});

describe('the API root', () => {
  it('refuses a URL that is not one, and one that carries credentials', async () => {
    await expect(createRemoteRuntime({ url: 'agent-host:8001/api', logger })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    await expect(createRemoteRuntime({ url: 'http://user:secret@agent-host:8001/api', logger })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('never follows a redirect, so the key stays with the server it was meant for', async () => {
    const secret = 'sk-redirected-key-0123456789';
    const seenElsewhere: string[] = [];
    const elsewhere = createServer((request, response) => {
      seenElsewhere.push(String(request.headers['x-api-key'] ?? request.headers.authorization ?? ''));
      response.end('{}');
    });
    const redirector = createServer((request, response) => {
      response.writeHead(307, { location: `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}${request.url}` }).end();
    });
    try {
      await Promise.all([elsewhere, redirector].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
      const redirected = await openRemote(`http://127.0.0.1:${(redirector.address() as AddressInfo).port}/api`, secret);
      await expect(redirected.createThread()).rejects.toMatchObject({ status: 503 });
      await expect(redirected.getGoal(threadId)).rejects.toMatchObject({ status: 503 });
      expect(seenElsewhere).toEqual([]);
    } finally {
      for (const server of [elsewhere, redirector]) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }
  });
});

describe('close', () => {
  it('ends waits and streams in flight on this side only: their runs go on remotely', async () => {
    const closing = await openRemote(apiUrl(openGateway));
    const joinedRunId = await startSlowRun(remote, 100);
    const otherThreadId = (await remote.createThread()).thread_id;
    fake.enqueue({ chunks: Array.from({ length: 100 }, () => 'tick '), chunkDelayMs: 100 });
    const streamed = await closing.streamRun(otherThreadId, say('count slowly', { stream_mode: ['messages-tuple'] }));
    try {
      const join = closing.joinRun(threadId, joinedRunId);
      await closing.close();
      await expect(join).rejects.toMatchObject({ userMessage: 'The connection to the agent server was closed.' });
      expect((await collect(streamed.events)).at(-1)).toEqual({
        event: 'error',
        data: { error: 'INTERNAL', message: 'The connection to the agent server was closed.' },
      });
      expect(['pending', 'running']).toContain((await remote.getRun(threadId, joinedRunId)).status);
      expect(['pending', 'running']).toContain((await remote.getRun(otherThreadId, streamed.run.run_id)).status);
      await expect(closing.getThread(threadId)).rejects.toMatchObject({ userMessage: 'The connection to the agent server was closed.' });
    } finally {
      await remote.cancelRun(threadId, joinedRunId, { wait: true });
      await remote.cancelRun(otherThreadId, streamed.run.run_id, { wait: true });
    }
  });
});

