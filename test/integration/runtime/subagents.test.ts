import { fileURLToPath } from 'node:url';
import type { RunnableConfig } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelConfig } from '../../../src/agent/config.js';
import { subagentsConfigSchema } from '../../../src/agent/subagents/config.js';
import type { HelpersEvent } from '../../../src/agent/subagents/progress.js';
import { HELPER_SOUL } from '../../../src/agent/subagents/task-tool.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { silentLogger } from '../../../src/logger.js';
import { extractFinalText } from '../../../src/manager/response.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime, RunRequest, StreamPart } from '../../../src/runtime/types.js';
import { type FakeChatRequest, FakeOpenAI, type FakeReply, messageText } from '../../fakes/openai/index.js';
import { Waiters } from '../../fakes/waiters.js';
import { openTestDatabase } from '../../helpers/database.js';

/**
 * The `task` tool through the embedded runtime and the real `ChatOpenAI`: helpers with their own
 * conversation and the run's tools, in parallel up to the limit, their progress on the run's
 * `custom` stream, their text never in the answer's stream, and their end with the run's.
 */

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));

/** A tool of the run's: it tells whose run called it, as the sandbox's tools find their folders. */
const whoAmI = tool(async (_input, config?: RunnableConfig) => `user ${String(config?.configurable?.user_id)}, thread ${String(config?.configurable?.thread_id)}`, {
  name: 'who_am_i',
  description: 'Tells whose conversation this is.',
  schema: z.object({}),
});

function ask(text: string): RunRequest {
  return { assistant_id: 'lead_agent', input: { messages: [{ role: 'human', content: text }] }, context: { user_id: 'alice' } };
}

function isHelperRequest(request: FakeChatRequest): boolean {
  return messageText(request.messages[0] ?? { role: 'system', content: '' }).startsWith(HELPER_SOUL.split('\n')[0] as string);
}

/** The job a helper was given: the first user message of its conversation. */
function jobOf(request: FakeChatRequest): string {
  return messageText(request.messages.find((message) => message.role === 'user') ?? { role: 'user', content: '' });
}

function toolNames(request: FakeChatRequest | undefined): string[] {
  return (request?.tools ?? []).map((definition) => (definition as { function: { name: string } }).function.name);
}

function toolResults(request: FakeChatRequest | undefined): string[] {
  return (request?.messages ?? []).filter((message) => message.role === 'tool').map((message) => messageText(message));
}

async function collect(events: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of events) parts.push(part);
  return parts;
}

describe('helpers (the task tool) through the embedded runtime', () => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  let models: ModelConfig[];
  const waits = new Waiters('subagents test', { pollMs: 20 });
  const runtimes: AgentRuntime[] = [];

  async function runtimeWith(subagents: Record<string, unknown> = {}): Promise<AgentRuntime> {
    const runtime = await createEmbeddedRuntime({
      db: database.db,
      models,
      agentsDir: AGENTS_DIR,
      logger: silentLogger(),
      tools: [whoAmI],
      subagents: subagentsConfigSchema.parse(subagents),
    });
    runtimes.push(runtime);
    return runtime;
  }

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    return async () => database.close();
  });
  beforeEach(async () => {
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    models = [{ name: 'default', model: 'gpt-4o-mini', base_url: model.baseURL, api_key: 'sk-test', timeout_seconds: 30, max_retries: 0 }];
  });
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    await model.stop();
  });

  it('runs two helpers in parallel, each with only its job and the run’s tools, and answers from their reports', async () => {
    const runtime = await runtimeWith();
    model.respond = (request): FakeReply => {
      if (!isHelperRequest(request)) {
        if (toolResults(request).length === 0) {
          return {
            toolCalls: [
              { name: 'task', args: { description: 'Check flights', prompt: 'Find the cheapest flight from Berlin to Lisbon on 12 January.' } },
              { name: 'task', args: { description: 'Check hotels', prompt: 'Find a hotel in Lisbon near the river for 12–15 January.' } },
            ],
          };
        }
        return { text: 'Fly on TP 555 for 89 EUR and stay at Hotel Rio.' };
      }
      if (jobOf(request).includes('flight')) {
        return toolResults(request).length === 0 ? { toolCalls: [{ name: 'who_am_i', args: {} }] } : { text: `Flight report: TP 555, 89 EUR (${toolResults(request)[0]}).` };
      }
      return { text: 'Hotel report: Hotel Rio, 110 EUR a night.' };
    };
    const thread = await runtime.createThread();
    const { events } = await runtime.streamRun(thread.thread_id, { ...ask('Plan my Lisbon trip.'), stream_mode: ['messages-tuple', 'values', 'custom'] });
    const parts = await collect(events);

    const final = parts.filter((part) => part.event === 'values').at(-1)?.data;
    expect(extractFinalText(final)).toBe('Fly on TP 555 for 89 EUR and stay at Hotel Rio.');
    // The thread keeps the lead's conversation: the question, the two calls, their reports, the answer.
    const kept = ((await runtime.getThread(thread.thread_id)).values?.messages ?? []) as { type: string }[];
    expect(kept.map((message) => message.type)).toEqual(['human', 'ai', 'tool', 'tool', 'ai']);
    const lead = model.requests.filter((request) => !isHelperRequest(request));
    expect(toolResults(lead.at(-1))).toEqual([
      `Flight report: TP 555, 89 EUR (user alice, thread ${thread.thread_id}).`,
      'Hotel report: Hotel Rio, 110 EUR a night.',
    ]);
    expect(toolNames(lead[0])).toEqual(['who_am_i', 'ask_clarification', 'task']);

    const helpers = model.requests.filter(isHelperRequest);
    expect(helpers.map(jobOf).sort()).toEqual([
      'Find a hotel in Lisbon near the river for 12–15 January.',
      'Find the cheapest flight from Berlin to Lisbon on 12 January.',
      'Find the cheapest flight from Berlin to Lisbon on 12 January.',
    ]);
    for (const request of helpers) {
      // Its own conversation: no trace of the person's message or the lead's.
      expect(request.messages.some((message) => messageText(message).includes('Plan my Lisbon trip'))).toBe(false);
      expect(toolNames(request)).toEqual(['who_am_i']);
    }

    // The answer's stream carries the lead's words only, never a helper's.
    const written = parts
      .filter((part) => part.event === 'messages')
      .map((part) => (part.data as { type?: string; content?: unknown }[])[0])
      .filter((message) => message?.type === 'ai')
      .map((message) => JSON.stringify(message?.content))
      .join('\n');
    expect(written).toContain('Fly ');
    expect(written).not.toContain('report');
    const progress = parts.filter((part) => part.event === 'custom').map((part) => part.data as HelpersEvent);
    expect(progress.at(-1)).toEqual({
      type: 'helpers',
      helpers: [
        { description: 'Check flights', state: 'done' },
        { description: 'Check hotels', state: 'done' },
      ],
    });
    expect(progress.some((event) => event.helpers.filter((helper) => helper.state === 'working').length === 2)).toBe(true);
  });

  it('keeps at most max_concurrent helpers working; the others wait their turn', async () => {
    const runtime = await runtimeWith({ max_concurrent: 2 });
    const release = new Set<string>();
    let working = 0;
    let mostAtOnce = 0;
    model.respond = async (request): Promise<FakeReply> => {
      if (!isHelperRequest(request)) {
        if (toolResults(request).length > 0) return { text: 'All three done.' };
        return { toolCalls: ['one', 'two', 'three'].map((job) => ({ name: 'task', args: { description: `Job ${job}`, prompt: `Do job ${job}.` } })) };
      }
      working += 1;
      mostAtOnce = Math.max(mostAtOnce, working);
      const job = jobOf(request);
      await waits.waitFor(() => release.has(job), 30_000);
      working -= 1;
      return { text: `${job} Done.` };
    };
    const thread = await runtime.createThread();
    const { events } = await runtime.streamRun(thread.thread_id, { ...ask('Do three jobs.'), stream_mode: ['values', 'custom'] });
    const parts: StreamPart[] = [];
    const reading = (async () => {
      for await (const part of events) parts.push(part);
    })();
    await waits.waitFor(() => working === 2, 30_000);
    const waiting = parts.filter((part) => part.event === 'custom').at(-1)?.data as HelpersEvent;
    expect(waiting.helpers.map((helper) => helper.state).sort()).toEqual(['waiting', 'working', 'working']);
    for (const job of ['Do job one.', 'Do job two.', 'Do job three.']) release.add(job);
    await reading;
    expect(mostAtOnce).toBe(2);
    expect(extractFinalText(parts.filter((part) => part.event === 'values').at(-1)?.data)).toBe('All three done.');
  });

  it('stops the helpers with their run when it is cancelled', async () => {
    const runtime = await runtimeWith();
    let helperCalls = 0;
    model.respond = async (request): Promise<FakeReply> => {
      if (!isHelperRequest(request)) return { toolCalls: [{ name: 'task', args: { description: 'Endless job', prompt: 'Work forever.' } }] };
      helperCalls += 1;
      // A helper that keeps working, one tool call after another.
      return { toolCalls: [{ name: 'who_am_i', args: {} }], chunkDelayMs: 20 };
    };
    const controller = new AbortController();
    const thread = await runtime.createThread();
    const run = runtime.waitRun(thread.thread_id, ask('Start the endless job.'), { signal: controller.signal }).catch((error: unknown) => error);
    await waits.waitFor(() => helperCalls >= 2, 30_000);
    controller.abort();
    expect(await run).toMatchObject({ code: 'RUN_CANCELLED' });
    const callsAtEnd = helperCalls;
    // Nothing more reaches the model once the run is over: a later run's requests are its own.
    model.respond = () => ({ text: 'Fresh answer.' });
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Hello again.'));
    expect(helperCalls).toBe(callsAtEnd);
    expect(model.requests.at(-1)?.messages.some((message) => messageText(message).includes('Work forever'))).toBe(false);
  });

  it('tells the agent in a sentence when a helper fails or runs out of steps, and the run goes on', async () => {
    const runtime = await runtimeWith({ max_steps: 5 });
    model.respond = (request): FakeReply => {
      if (!isHelperRequest(request)) {
        if (toolResults(request).length > 0) return { text: 'Both helpers failed; here is what I know.' };
        return {
          toolCalls: [
            { name: 'task', args: { description: 'Broken job', prompt: 'The model fails on this one.' } },
            { name: 'task', args: { description: 'Long job', prompt: 'This one never ends.' } },
          ],
        };
      }
      if (jobOf(request).includes('fails')) return { fail: { status: 500, message: 'upstream exploded with key sk-secret-123456' } };
      return { toolCalls: [{ name: 'who_am_i', args: {} }] };
    };
    const { values } = await runtime.waitRun((await runtime.createThread()).thread_id, ask('Try both.'));
    expect(extractFinalText(values)).toBe('Both helpers failed; here is what I know.');
    const lead = model.requests.filter((request) => !isHelperRequest(request));
    expect(toolResults(lead.at(-1))).toEqual([
      'Error: the helper could not finish "Broken job" (the model answered HTTP 500).',
      'Error: the helper stopped after 5 steps without finishing "Long job"; its work is lost. Split the job, or do it yourself.',
    ]);
  });

  it('gives the agent no task tool when subagents are off', async () => {
    const runtime = await runtimeWith({ enabled: false });
    model.enqueue({ text: 'Hi.' });
    await runtime.waitRun((await runtime.createThread()).thread_id, ask('Hello.'));
    expect(toolNames(model.requests[0])).toEqual(['who_am_i', 'ask_clarification']);
  });
});
