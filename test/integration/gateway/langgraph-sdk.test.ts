/**
 * The official `@langchain/langgraph-sdk` Client against our gateway, served by the real embedded
 * runtime (LangGraph + database) on the fake OpenAI model: the SDK must not notice it is not
 * talking to LangGraph Platform.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { modelConfigSchema } from '../../../src/agent/config.js';
import { buildApp } from '../../../src/gateway/app.js';
import { silentLogger } from '../../../src/logger.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime } from '../../../src/runtime/types.js';
import { FakeOpenAI } from '../../fakes/openai/index.js';
import { openTestDatabase } from '../../helpers/database.js';

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));
const ASSISTANT = 'lead_agent';

let fake: FakeOpenAI;
let database: Awaited<ReturnType<typeof openTestDatabase>>;
let runtime: AgentRuntime;
let app: FastifyInstance;
let client: Client;
let threadId: string;

beforeAll(async () => {
  fake = new FakeOpenAI();
  await fake.start();
  database = await openTestDatabase();
  const logger = silentLogger();
  runtime = await createEmbeddedRuntime({
    db: database.db,
    models: [modelConfigSchema.parse({ name: 'default', model: 'gpt-4o-mini', base_url: fake.baseURL, api_key: 'sk-fake', max_retries: 0 })],
    agentsDir: AGENTS_DIR,
    logger,
  });
  app = await buildApp({
    runtime,
    logger,
    health: async () => ({
      ok: true,
      database: { ok: true, kind: database.kind },
      bus: { ok: true, kind: 'in-process' },
      channels: {},
      model: { configured: true, models: ['default'] },
    }),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  client = new Client({ apiUrl: `http://127.0.0.1:${port}/api`, apiKey: null, callerOptions: { maxRetries: 0 } });
});

afterAll(async () => {
  // Undici keeps spare sockets open; without this, close() waits for them to time out.
  app?.server.closeAllConnections();
  await app?.close();
  await runtime?.close();
  await database?.close();
  await fake?.stop();
});

beforeEach(async () => {
  threadId = (await client.threads.create()).thread_id;
});

const say = (text: string) => ({ messages: [{ role: 'user', content: text }] });

type WireMessage = { type: string; content: unknown };

function lastMessages(values: unknown): WireMessage[] {
  return ((values as { messages?: WireMessage[] }).messages ?? []).map(({ type, content }) => ({ type, content }));
}

/** Starts a run whose model answer takes ~5 s and resolves once the model is answering. */
async function startSlowRun(): Promise<string> {
  const before = fake.requests.length;
  fake.enqueue({ chunks: Array.from({ length: 50 }, () => 'tick '), chunkDelayMs: 100 });
  const run = await client.runs.create(threadId, ASSISTANT, { input: say('count slowly') });
  await fake.waitForRequests(before + 1, 5000);
  return run.run_id;
}

describe('threads', () => {
  it('creates, gets, and honours if_exists', async () => {
    const id = crypto.randomUUID();
    const created = await client.threads.create({ threadId: id, metadata: { chat: 'test' } });
    expect(created).toMatchObject({ thread_id: id, status: 'idle', metadata: { chat: 'test' } });

    const fetched = await client.threads.get(id);
    expect(fetched).toMatchObject({ thread_id: id, status: 'idle', metadata: { chat: 'test' } });

    const again = await client.threads.create({ threadId: id, ifExists: 'do_nothing' });
    expect(again.thread_id).toBe(id);
    expect(again.created_at).toBe(created.created_at);

    await expect(client.threads.create({ threadId: id, ifExists: 'raise' })).rejects.toMatchObject({ status: 409 });
    await expect(client.threads.get(crypto.randomUUID())).rejects.toMatchObject({ status: 404 });
  });
});

describe('runs.stream', () => {
  it("yields the model's answer as AI message chunks, then the conversation as values", async () => {
    const answer = 'Hello from the fake model, in pieces.';
    fake.enqueue({ text: answer });
    const created: { run_id: string; thread_id?: string }[] = [];

    const parts: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.stream(threadId, ASSISTANT, {
      input: say('hi'),
      streamMode: ['messages-tuple', 'values'],
      onRunCreated: (meta) => created.push(meta),
    })) {
      parts.push({ event: part.event, data: part.data });
    }

    expect(created).toEqual([{ run_id: expect.any(String), thread_id: threadId }]);
    expect(parts[0]).toEqual({ event: 'metadata', data: { run_id: created[0]?.run_id, attempt: 1 } });
    const chunks = parts
      .filter((part) => part.event === 'messages')
      .map((part) => (part.data as [WireMessage, Record<string, unknown>])[0])
      .filter((message) => message.type === 'ai' || message.type === 'AIMessageChunk');
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((message) => message.content).join('')).toBe(answer);

    const values = parts.filter((part) => part.event === 'values').at(-1);
    expect(lastMessages(values?.data)).toEqual([
      { type: 'human', content: 'hi' },
      { type: 'ai', content: answer },
    ]);
    expect(parts.some((part) => part.event === 'error')).toBe(false);

    const thread = await client.threads.get(threadId);
    expect(thread.status).toBe('idle');
    expect(lastMessages(thread.values)).toEqual(lastMessages(values?.data));
  });
  it('cancels the run when the client disconnects mid-stream', async () => {
    fake.enqueue({ chunks: Array.from({ length: 50 }, () => 'tick '), chunkDelayMs: 100 });
    const controller = new AbortController();
    let runId = '';
    const consume = async () => {
      for await (const part of client.runs.stream(threadId, ASSISTANT, {
        input: say('count slowly'),
        streamMode: ['messages-tuple'],
        signal: controller.signal,
        onRunCreated: (meta) => {
          runId = meta.run_id;
        },
      })) {
        if (part.event === 'messages') controller.abort();
      }
    };
    await consume().catch((error: unknown) => {
      if ((error as Error).name !== 'AbortError') throw error;
    });
    await vi.waitFor(async () => expect((await client.runs.get(threadId, runId)).status).toBe('interrupted'), {
      timeout: 10_000,
      interval: 50,
    });
  });
});

describe('runs.wait', () => {
  it('returns the final values, with the run id from Content-Location', async () => {
    const created: { run_id: string }[] = [];
    const values = await client.runs.wait(threadId, ASSISTANT, {
      input: say('ping'),
      onRunCreated: (meta) => created.push(meta),
    });
    expect(lastMessages(values)).toEqual([
      { type: 'human', content: 'ping' },
      { type: 'ai', content: 'Echo: ping' },
    ]);
    expect((await client.runs.get(threadId, created[0]?.run_id ?? '')).status).toBe('success');
  });

  it("throws the run's error when the model fails", async () => {
    fake.enqueue({ fail: { status: 400, message: 'context too long, key sk-leak' } });
    const failure = client.runs.wait(threadId, ASSISTANT, { input: say('boom') });
    await expect(failure).rejects.toThrow(/^MODEL_FAILED: /);
    await expect(failure).rejects.not.toThrow(/sk-leak/);
  });
});

describe('runs.create and runs.get', () => {
  it('creates a pending run that ends in success', async () => {
    const run = await client.runs.create(threadId, ASSISTANT, { input: say('background') });
    expect(run).toMatchObject({ thread_id: threadId, assistant_id: ASSISTANT, multitask_strategy: 'reject' });
    expect(['pending', 'running']).toContain(run.status);

    await vi.waitFor(async () => expect((await client.runs.get(threadId, run.run_id)).status).toBe('success'), {
      timeout: 10_000,
      interval: 50,
    });
    expect(lastMessages((await client.threads.get(threadId)).values).at(-1)).toEqual({ type: 'ai', content: 'Echo: background' });
  });
});

describe('runs.cancel', () => {
  it('interrupts a slow run and waits for it to stop (wait=1 → 204)', async () => {
    const runId = await startSlowRun();
    await expect(client.runs.cancel(threadId, runId, true)).resolves.toBeUndefined();
    expect((await client.runs.get(threadId, runId)).status).toBe('interrupted');
    expect((await client.threads.get(threadId)).status).toBe('idle');
  });

  it('accepts a cancel without waiting (wait=0 → 202) and the run ends interrupted', async () => {
    const runId = await startSlowRun();
    await expect(client.runs.cancel(threadId, runId, false, 'interrupt')).resolves.toBeUndefined();
    await vi.waitFor(async () => expect((await client.runs.get(threadId, runId)).status).toBe('interrupted'), {
      timeout: 10_000,
      interval: 50,
    });
  });
});

describe('a busy thread', () => {
  it('refuses a second run with 409 on every run route', async () => {
    const runId = await startSlowRun();
    try {
      await expect(client.runs.create(threadId, ASSISTANT, { input: say('again') })).rejects.toMatchObject({ status: 409 });
      await expect(client.runs.wait(threadId, ASSISTANT, { input: say('again') })).rejects.toMatchObject({ status: 409 });
      const stream = async () => {
        for await (const _part of client.runs.stream(threadId, ASSISTANT, { input: say('again') })) {
          // A 409 arrives before any event.
        }
      };
      await expect(stream()).rejects.toMatchObject({ status: 409 });
    } finally {
      await client.runs.cancel(threadId, runId, true);
    }
  });
});

describe('models and health', () => {
  it('lists the configured model and reports health', async () => {
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    expect(await (await fetch(`${base}/api/models`)).json()).toEqual({ models: [{ name: 'default', model: 'gpt-4o-mini' }] });
    expect((await fetch(`${base}/health`)).status).toBe(200);
  });
});
