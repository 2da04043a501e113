import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/agent/config.js';
import { type DatabaseHandle, schema } from '../../../src/db/index.js';
import { AppError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime, RunRequest, StreamPart } from '../../../src/runtime/types.js';
import { FakeOpenAI } from '../../fakes/openai/index.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));

function ask(text: string, extra: Partial<RunRequest> = {}): RunRequest {
  return { assistant_id: 'lead_agent', input: { messages: [{ role: 'human', content: text }] }, ...extra };
}

async function collect(events: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of events) parts.push(part);
  return parts;
}

function aiText(parts: StreamPart[]): string {
  return parts
    .filter((p) => p.event === 'messages')
    .map((p) => (p.data as [{ type: string; content: string }])[0])
    .filter((m) => m.type === 'ai')
    .map((m) => m.content)
    .join('');
}

function codeOf(error: unknown): string | undefined {
  return error instanceof AppError ? error.code : undefined;
}

describe.each(testDatabaseKinds())('embedded runtime on %s', (kind) => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  let runtime: AgentRuntime;
  let models: ModelConfig[];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    models = [{ name: 'default', model: 'gpt-4o-mini', base_url: model.baseURL, api_key: 'sk-test', timeout_seconds: 30, max_retries: 0 }];
    runtime = await createEmbeddedRuntime({ db: database.db, models, agentsDir: AGENTS_DIR, logger: silentLogger(), leaseMs: 600 });
  });
  afterAll(async () => {
    await runtime.close();
    await model.stop();
    await database.close();
  });
  beforeEach(() => {
    model.respond = (request) => ({ text: `Echo: ${String(request.messages.at(-1)?.content)}` });
  });

  it('streams the answer token by token, then the final state, and records the run with its usage', async () => {
    const thread = await runtime.createThread();
    model.enqueue({ chunks: ['The ', 'answer ', 'is 42.'], usage: { prompt_tokens: 11, completion_tokens: 7 } });
    const { run, events } = await runtime.streamRun(thread.thread_id, ask('what is it?', { stream_mode: ['messages-tuple', 'values'] }));
    const parts = await collect(events);
    expect(parts[0]).toEqual({ event: 'metadata', data: { run_id: run.run_id, attempt: 1 } });
    expect(aiText(parts)).toBe('The answer is 42.');
    const lastValues = parts.filter((p) => p.event === 'values').at(-1)?.data as { messages: { type: string; content: string }[] };
    expect(lastValues.messages.map((m) => [m.type, m.content])).toEqual([
      ['human', 'what is it?'],
      ['ai', 'The answer is 42.'],
    ]);
    const stored = await runtime.getRun(thread.thread_id, run.run_id);
    expect(stored.status).toBe('success');
    const [row] = await database.db.select().from(schema.runs).where(eq(schema.runs.id, run.run_id));
    expect(row?.usage).toEqual({ input_tokens: 11, output_tokens: 7, total_tokens: 18 });
    expect(row?.startedAt).toBeInstanceOf(Date);
    expect(row?.finishedAt).toBeInstanceOf(Date);
  });

  it('sends the lead agent prompt as the system message and keeps the conversation across runs', async () => {
    const thread = await runtime.createThread();
    await runtime.waitRun(thread.thread_id, ask('first'));
    const before = model.requests.length;
    const { values } = await runtime.waitRun(thread.thread_id, ask('second'));
    const request = model.requests[before];
    expect(request?.messages[0]?.role).toBe('system');
    expect(String(request?.messages[0]?.content)).toContain('You are DeerFlow');
    expect(request?.messages.slice(1).map((m) => m.content)).toEqual(['first', 'Echo: first', 'second']);
    expect((values.messages as unknown[]).length).toBe(4);
    const state = await runtime.getThread(thread.thread_id);
    expect(state.status).toBe('idle');
    expect(state.values?.messages).toHaveLength(4);
  });

  it('rejects a second run on a busy thread, and accepts one after the first finished', async () => {
    const thread = await runtime.createThread();
    model.enqueue({ chunks: ['slow ', 'answer'], chunkDelayMs: 150 });
    const first = await runtime.streamRun(thread.thread_id, ask('one', { stream_mode: ['values'] }));
    await expect(runtime.waitRun(thread.thread_id, ask('two'))).rejects.toSatisfy((e) => codeOf(e) === 'THREAD_BUSY');
    expect((await runtime.getThread(thread.thread_id)).status).toBe('busy');
    await collect(first.events);
    await expect(runtime.waitRun(thread.thread_id, ask('three'))).resolves.toBeDefined();
  });

  /**
   * A run streaming 80 slow tokens; `meanwhile` is called once, at its third part. Resolves with
   * every part the stream gave.
   */
  async function longRun(meanwhile: (threadId: string, runId: string) => Promise<void>): Promise<{ threadId: string; runId: string; parts: StreamPart[] }> {
    const thread = await runtime.createThread();
    model.enqueue({ chunks: Array.from({ length: 80 }, (_, i) => `w${i} `), chunkDelayMs: 50 });
    const { run, events } = await runtime.streamRun(thread.thread_id, ask('long', { stream_mode: ['messages-tuple'] }));
    const parts: StreamPart[] = [];
    for await (const part of events) {
      parts.push(part);
      if (parts.length === 3) await meanwhile(thread.thread_id, run.run_id);
    }
    return { threadId: thread.thread_id, runId: run.run_id, parts };
  }

  it('cancels a run: the stream ends with an error part and the run is interrupted', async () => {
    const { threadId, runId, parts } = await longRun((thread, run) => runtime.cancelRun(thread, run));
    expect(parts.at(-1)).toEqual({ event: 'error', data: { error: 'RUN_CANCELLED', message: 'The run was cancelled.' } });
    expect((await runtime.getRun(threadId, runId)).status).toBe('interrupted');
    // The question stays in the conversation even though the run ended early.
    const state = await runtime.getThread(threadId);
    const messages = (state.values?.messages ?? []) as { type: string; content: string }[];
    expect(messages.map((m) => [m.type, m.content])[0]).toEqual(['human', 'long']);
  });

  it('cancels a run another process holds: the cancel reaches it at its next lease renewal', async () => {
    const other = await createEmbeddedRuntime({ db: database.db, models, agentsDir: AGENTS_DIR, logger: silentLogger(), leaseMs: 600 });
    try {
      const { threadId, runId, parts } = await longRun((thread, run) => other.cancelRun(thread, run));
      expect(parts.at(-1)).toEqual({ event: 'error', data: { error: 'RUN_CANCELLED', message: 'The run was cancelled.' } });
      expect(aiText(parts)).not.toContain('w79');
      expect((await runtime.getRun(threadId, runId)).status).toBe('interrupted');
    } finally {
      await other.close();
    }
  });

  it('stops without a word a run that another process ended after its lease ran out (this one stalled)', async () => {
    // What the run store does to a run whose lease ran out when another process admits a run on its thread.
    const { threadId, runId, parts } = await longRun(async (_thread, run) => {
      await database.db.update(schema.runs).set({ status: 'error', error: 'lease expired: the process running it stopped' }).where(eq(schema.runs.id, run));
    });
    expect(parts.at(-1)).toEqual({ event: 'error', data: { error: 'RUN_TAKEN_OVER' } });
    expect(aiText(parts)).not.toContain('w79');
    // The taker's record of it stays.
    expect(await runtime.getRun(threadId, runId)).toMatchObject({ status: 'error' });
  });

  it.each([
    [401, "The model service refused this server's key. Ask the operator to check the model's api_key."],
    [404, 'The model service does not know the configured model. Ask the operator to check models[].model.'],
    [429, 'The model service is rate limiting this server right now. Please try again in a minute.'],
  ])('names the model trouble a %s answer means, without the endpoint text', async (status, sentence) => {
    const thread = await runtime.createThread();
    model.enqueue({ fail: { status, message: 'endpoint says sk-live-456 is wrong' } });
    const parts = await collect((await runtime.streamRun(thread.thread_id, ask('hi', { stream_mode: ['values'] }))).events);
    expect(parts.at(-1)).toEqual({ event: 'error', data: { error: 'MODEL_UNAVAILABLE', message: sentence } });
    expect(JSON.stringify(parts)).not.toContain('sk-live');
  });

  it('says the model service cannot be reached when nothing answers at its address', async () => {
    const closed: ModelConfig = { name: 'default', model: 'gpt-4o-mini', base_url: 'http://127.0.0.1:1/v1', api_key: 'sk-fake', timeout_seconds: 30, max_retries: 0 };
    const offline = await createEmbeddedRuntime({ db: database.db, models: [closed], agentsDir: AGENTS_DIR, logger: silentLogger() });
    try {
      const thread = await offline.createThread();
      const parts = await collect((await offline.streamRun(thread.thread_id, ask('hi', { stream_mode: ['values'] }))).events);
      expect(parts.at(-1)).toEqual({
        event: 'error',
        data: { error: 'MODEL_UNAVAILABLE', message: 'The model service cannot be reached right now. Please try again in a moment.' },
      });
    } finally {
      await offline.close();
    }
  });

  it('reports a model failure as an error part, records it without the endpoint text, and frees the thread', async () => {
    const thread = await runtime.createThread();
    model.enqueue({ fail: { status: 500, message: 'upstream exploded with secret sk-live-123' } });
    const { run, events } = await runtime.streamRun(thread.thread_id, ask('hi', { stream_mode: ['values'] }));
    const parts = await collect(events);
    expect(parts.at(-1)).toEqual({ event: 'error', data: { error: 'MODEL_FAILED', message: 'The agent run failed. Please try again.' } });
    const [row] = await database.db.select().from(schema.runs).where(eq(schema.runs.id, run.run_id));
    expect(row?.status).toBe('error');
    expect(row?.error).not.toContain('sk-live');
    const { values } = await runtime.waitRun(thread.thread_id, ask('again'));
    expect((values.messages as { type: string; content: string }[]).map((m) => [m.type, m.content])).toEqual([
      ['human', 'hi'],
      ['human', 'again'],
      ['ai', 'Echo: again'],
    ]);
  });

  it('fails a run whose model stream ends without a finish reason, after streaming the partial, and frees the thread', async () => {
    const thread = await runtime.createThread();
    model.enqueue({ chunks: ['I was ', 'saying ', 'something'], endAfterChunks: 2 });
    const { run, events } = await runtime.streamRun(thread.thread_id, ask('hi', { stream_mode: ['messages-tuple', 'values'] }));
    const parts = await collect(events);
    expect(aiText(parts)).toBe('I was saying ');
    expect(parts.at(-1)).toEqual({
      event: 'error',
      data: { error: 'MODEL_FAILED', message: 'The model stopped before it finished its answer. Please try again.' },
    });
    expect((await runtime.getRun(thread.thread_id, run.run_id)).status).toBe('error');
    const { values } = await runtime.waitRun(thread.thread_id, ask('again'));
    expect((values.messages as { type: string; content: string }[]).map((m) => [m.type, m.content])).toEqual([
      ['human', 'hi'],
      ['human', 'again'],
      ['ai', 'Echo: again'],
    ]);
  });

  it('creates a run that goes on in the background', async () => {
    const thread = await runtime.createThread();
    const run = await runtime.createRun(thread.thread_id, ask('background'));
    expect(['pending', 'running']).toContain(run.status);
    for (let i = 0; i < 100 && (await runtime.getRun(thread.thread_id, run.run_id)).status !== 'success'; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await runtime.getRun(thread.thread_id, run.run_id)).status).toBe('success');
  });

  it('frees a thread whose active run was left by a process that died, once its lease ran out', async () => {
    const thread = await runtime.createThread();
    const orphan = randomUUID();
    await database.db.insert(schema.runs).values({
      id: orphan,
      threadId: thread.thread_id,
      assistantId: 'lead_agent',
      status: 'running',
      leaseExpiresAt: new Date(Date.now() - 1000),
    });
    await expect(runtime.waitRun(thread.thread_id, ask('after a crash'))).resolves.toBeDefined();
    const [row] = await database.db.select().from(schema.runs).where(eq(schema.runs.id, orphan));
    expect(row?.status).toBe('error');
  });

  it('refuses unknown threads, assistants and models, and malformed ids', async () => {
    const thread = await runtime.createThread();
    await expect(runtime.getThread(randomUUID())).rejects.toSatisfy((e) => codeOf(e) === 'NOT_FOUND');
    await expect(runtime.getThread('not-a-uuid')).rejects.toSatisfy((e) => codeOf(e) === 'BAD_REQUEST');
    await expect(runtime.waitRun(thread.thread_id, { ...ask('x'), assistant_id: 'nope' })).rejects.toSatisfy((e) => codeOf(e) === 'NOT_FOUND');
    await expect(
      runtime.waitRun(thread.thread_id, ask('x', { config: { configurable: { model_name: 'missing' } } })),
    ).rejects.toSatisfy((e) => codeOf(e) === 'BAD_REQUEST');
    await expect(runtime.createThread({ thread_id: thread.thread_id })).rejects.toSatisfy((e) => codeOf(e) === 'CONFLICT');
    expect((await runtime.createThread({ thread_id: thread.thread_id, if_exists: 'do_nothing' })).thread_id).toBe(thread.thread_id);
  });

  it('refuses runs with a clear message when no model is configured', async () => {
    const bare = await createEmbeddedRuntime({ db: database.db, models: [], agentsDir: AGENTS_DIR, logger: silentLogger() });
    const thread = await bare.createThread();
    const error = await bare.waitRun(thread.thread_id, ask('hello')).catch((e: unknown) => e);
    expect(codeOf(error)).toBe('MODEL_NOT_CONFIGURED');
    expect((error as AppError).userMessage).toMatch(/No model is configured/);
    await bare.close();
  });

  it('joins a background run: resolves once it ended, at once for a finished one; a busy refusal names the run holding the thread', async () => {
    const thread = await runtime.createThread();
    let finish: (() => void) | undefined;
    model.respond = () =>
      new Promise((resolve) => {
        finish = () => resolve({ text: 'done in the background' });
      });
    const run = await runtime.createRun(thread.thread_id, ask('work'));
    const busy = await runtime.createRun(thread.thread_id, ask('more')).catch((e: unknown) => e);
    expect(codeOf(busy)).toBe('THREAD_BUSY');
    expect((busy as { activeRunId?: string }).activeRunId).toBe(run.run_id);

    let joined = false;
    const joining = runtime.joinRun(thread.thread_id, run.run_id).then((info) => {
      joined = true;
      return info;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(joined).toBe(false);
    await waitUntil(() => finish !== undefined);
    finish?.();
    expect((await joining).status).toBe('success');
    expect((await runtime.joinRun(thread.thread_id, run.run_id)).status).toBe('success');
    await expect(runtime.joinRun(thread.thread_id, randomUUID())).rejects.toSatisfy((e) => codeOf(e) === 'NOT_FOUND');
  });

  it('reads a thread without its values when only its metadata is wanted', async () => {
    const thread = await runtime.createThread({ metadata: { owner_user_id: 'u-1' } });
    await runtime.waitRun(thread.thread_id, ask('remember this'));
    const full = await runtime.getThread(thread.thread_id);
    const light = await runtime.getThread(thread.thread_id, { withValues: false });
    expect(full.values).not.toBeNull();
    expect(light).toMatchObject({ thread_id: thread.thread_id, metadata: { owner_user_id: 'u-1' }, status: 'idle', values: null });
  });

  it('runs at most maxBackgroundRuns background runs at once; the others wait, holding their threads', async () => {
    const limited = await createEmbeddedRuntime({ db: database.db, models, agentsDir: AGENTS_DIR, logger: silentLogger(), maxBackgroundRuns: 1 });
    const releases: Array<() => void> = [];
    model.respond = () => new Promise((resolve) => releases.push(() => resolve({ text: 'ok' })));
    const [a, b] = [await limited.createThread(), await limited.createThread()];
    const first = await limited.createRun(a.thread_id, ask('first'));
    const second = await limited.createRun(b.thread_id, ask('second'));
    await waitUntil(() => releases.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(releases).toHaveLength(1);
    // Waiting for its turn, the second run already holds its thread.
    await expect(limited.createRun(b.thread_id, ask('third'))).rejects.toSatisfy((e) => codeOf(e) === 'THREAD_BUSY');
    releases[0]?.();
    await waitUntil(() => releases.length === 2);
    releases[1]?.();
    expect((await limited.joinRun(a.thread_id, first.run_id)).status).toBe('success');
    expect((await limited.joinRun(b.thread_id, second.run_id)).status).toBe('success');
    await limited.close();
  });

  it('answers as a custom agent named in context.agent_name, with its SOUL.md', async () => {
    const agentsDir = mkdtempSync(join(tmpdir(), 'dfc-agents-'));
    mkdirSync(join(agentsDir, 'lead'));
    writeFileSync(join(agentsDir, 'lead', 'SOUL.md'), 'You are the default agent.');
    mkdirSync(join(agentsDir, 'reviewer'));
    writeFileSync(join(agentsDir, 'reviewer', 'SOUL.md'), 'You are Reviewer.');
    mkdirSync(join(agentsDir, 'soulless'));
    writeFileSync(join(agentsDir, 'soulless', 'config.yaml'), 'description: no persona of its own\n');
    const custom = await createEmbeddedRuntime({ db: database.db, models, agentsDir, logger: silentLogger() });
    const systemOf = async (agentName?: string) => {
      const thread = await custom.createThread();
      const before = model.requests.length;
      await custom.waitRun(thread.thread_id, ask('hi', agentName === undefined ? {} : { context: { agent_name: agentName } }));
      const system = model.requests[before]?.messages.find((m) => m.role === 'system')?.content;
      return String(system);
    };
    expect(await systemOf('reviewer')).toMatch(/^You are Reviewer\./);
    expect(await systemOf()).toMatch(/^You are the default agent\./);
    expect(await systemOf('soulless')).toMatch(/^You are the default agent\./);
    const thread = await custom.createThread();
    await expect(custom.waitRun(thread.thread_id, ask('x', { context: { agent_name: 'ghost' } }))).rejects.toSatisfy(
      (e) => codeOf(e) === 'NOT_FOUND',
    );
    await expect(custom.waitRun(thread.thread_id, ask('x', { context: { agent_name: '../lead' } }))).rejects.toSatisfy(
      (e) => codeOf(e) === 'BAD_REQUEST',
    );
    await custom.close();
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
