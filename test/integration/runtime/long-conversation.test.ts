import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/agent/config.js';
import { summarizationConfigSchema } from '../../../src/agent/context/config.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { silentLogger } from '../../../src/logger.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime, RunRequest } from '../../../src/runtime/types.js';
import { type FakeChatRequest, FakeOpenAI, lastUserText, messageText, requestTokens } from '../../fakes/openai/index.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';
import { answerFromRequest, CODE, isSummaryRequest, summaryOfCodes } from '../../helpers/summaries.js';

/**
 * A conversation far longer than its model's window, through the embedded runtime and the real
 * `ChatOpenAI` against a fake endpoint: every turn is answered, no request outgrows the budget,
 * and what the person said in the first turn is still known at the last, through the summary.
 */

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));
const TURNS = 200;
const CONTEXT_WINDOW = 4_096;
/** The window less the answer's reserve (`summarization.answer_reserve`, default 0.25). */
const INPUT_BUDGET = CONTEXT_WINDOW * 0.75;
/** A sentence to make each turn cost ~60 tokens each way, so the history outgrows the window in ~20 turns. */
const PADDING = 'The quick brown fox jumps over the lazy dog while the band plays on. '.repeat(3);

function ask(text: string): RunRequest {
  return { assistant_id: 'lead_agent', input: { messages: [{ role: 'human', content: text }] } };
}

describe.each(testDatabaseKinds())('a long conversation on %s', (kind) => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  let runtime: AgentRuntime;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    // A model that refuses a request over its window, as endpoints do. A faithful summariser: it
    // keeps every code it reads, in the summary so far and in the new messages. The chat model
    // answers a question about an item from whatever its request holds.
    model.respond = (request) => {
      if (requestTokens(request) > CONTEXT_WINDOW) {
        return { fail: { status: 400, message: `This model's maximum context length is ${CONTEXT_WINDOW} tokens.` } };
      }
      if (isSummaryRequest(request)) return summaryOfCodes(request);
      const question = lastUserText(request.messages);
      if (question.startsWith('Look up item')) {
        // A turn with a tool: the model asks back (a call and its result), which ends the turn.
        return { toolCalls: [{ name: 'ask_clarification', args: { question: `Which item? ${PADDING}`, clarification_type: 'missing_info' } }] };
      }
      const asked = /What was the code for item (\d+)\?/.exec(question);
      if (asked) return answerFromRequest(request, asked[1] as string);
      return { text: `Noted ${question.match(CODE)?.[0] ?? 'nothing'}. ${PADDING}` };
    };
    const models: ModelConfig[] = [
      { name: 'small', model: 'gpt-4o-mini', base_url: model.baseURL, api_key: 'sk-test', timeout_seconds: 30, max_retries: 0, context_window: CONTEXT_WINDOW },
    ];
    runtime = await createEmbeddedRuntime({
      db: database.db,
      models,
      agentsDir: AGENTS_DIR,
      logger: silentLogger(),
      summarization: summarizationConfigSchema.parse({}),
    });
  });
  afterAll(async () => {
    await runtime?.close();
    await model?.stop();
    await database?.close();
  });

  it(`answers all ${TURNS} turns within the window and still knows the first turn at the last`, async () => {
    const thread = await runtime.createThread();
    for (let turn = 1; turn < TURNS; turn++) {
      const { values } = await runtime.waitRun(thread.thread_id, ask(`Item ${turn}: remember the code K${turn}X. ${PADDING}`));
      const messages = values.messages as Array<{ type: string; content: string }>;
      expect(messages.at(-1)?.content).toContain(`Noted K${turn}X.`);
    }
    const { values } = await runtime.waitRun(thread.thread_id, ask('What was the code for item 1?'));
    expect((values.messages as Array<{ content: string }>).at(-1)?.content).toBe('The code for item 1 was K1X.');

    const chatRequests = model.requests.filter((request) => !isSummaryRequest(request));
    const summaryRequests = model.requests.filter(isSummaryRequest);
    expect(chatRequests).toHaveLength(TURNS);
    expect(Math.max(...chatRequests.map(requestTokens))).toBeLessThanOrEqual(INPUT_BUDGET);
    // The first turn reached the last request only through the summary, not as the person's message.
    const last = chatRequests.at(-1) as FakeChatRequest;
    expect(last.messages.some((message) => messageText(message).startsWith('Item 1:'))).toBe(false);
    expect(last.messages.some((message) => message.role === 'user' && messageText(message).includes('<conversation_summary>'))).toBe(true);
    // Folding is occasional: far fewer summaries than turns, each reading only the turns it folds.
    expect(summaryRequests.length).toBeGreaterThan(3);
    expect(summaryRequests.length).toBeLessThan(TURNS / 5);
    expect(Math.max(...summaryRequests.map(requestTokens))).toBeLessThanOrEqual(INPUT_BUDGET);

    // The thread keeps the summary in its state, and only the turns after it as messages.
    const state = await runtime.getThread(thread.thread_id);
    const stored = state.values as { messages: unknown[]; summary?: string };
    expect(stored.summary).toContain('K1X');
    expect(stored.messages.length).toBeLessThan(40);
  }, 300_000);

  it('folds turns that used tools without parting a call from its result, and never streams a summary', async () => {
    const thread = await runtime.createThread();
    let streamed = '';
    const errors: unknown[] = [];
    for (let turn = 1; turn <= 40; turn++) {
      const { events } = await runtime.streamRun(thread.thread_id, { ...ask(`Look up item ${turn}: remember the code K${turn}X.`), stream_mode: ['messages-tuple'] });
      for await (const part of events) {
        if (part.event === 'error') errors.push(part.data);
        if (part.event !== 'messages') continue;
        const [message] = part.data as [{ type: string; content: string }];
        if (message.type === 'AIMessageChunk' || message.type === 'ai') streamed += message.content;
      }
    }
    const { values } = await runtime.waitRun(thread.thread_id, ask('What was the code for item 1?'));
    expect((values.messages as Array<{ content: string }>).at(-1)?.content).toBe('The code for item 1 was K1X.');
    // The fake endpoint refuses a tool message without its call (and a call without its result), as OpenAI does.
    expect(errors).toEqual([]);
    expect(streamed).not.toContain('Codes the person gave');
    const state = await runtime.getThread(thread.thread_id);
    expect((state.values as { summary?: string }).summary).toContain('K1X');
  }, 300_000);
});

describe('a long conversation whose summariser fails', () => {
  let database: DatabaseHandle;
  let model: FakeOpenAI;
  /** Which model ids fail every summary request. */
  let failingSummarizers: Set<string>;

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    model = new FakeOpenAI({ apiKey: 'sk-test' });
    await model.start();
    model.respond = (request) => {
      if (requestTokens(request) > CONTEXT_WINDOW) return { fail: { status: 400, message: 'context length exceeded' } };
      if (isSummaryRequest(request)) {
        if (failingSummarizers.has(request.model)) return { fail: { status: 500, message: 'summariser down' } };
        return summaryOfCodes(request);
      }
      return { text: `Noted ${lastUserText(request.messages).match(CODE)?.[0] ?? 'nothing'}. ${PADDING}` };
    };
  });
  afterAll(async () => {
    await model?.stop();
    await database?.close();
  });

  async function chatFor(turns: number): Promise<{ answers: string[]; summary: string | undefined }> {
    const base = { base_url: model.baseURL, api_key: 'sk-test', timeout_seconds: 30, max_retries: 0, context_window: CONTEXT_WINDOW };
    const runtime = await createEmbeddedRuntime({
      db: database.db,
      models: [
        { name: 'small', model: 'chat-model', ...base },
        { name: 'cheap', model: 'summary-model', ...base },
      ],
      agentsDir: AGENTS_DIR,
      logger: silentLogger(),
      summarization: summarizationConfigSchema.parse({ model_name: 'cheap' }),
    });
    try {
      const thread = await runtime.createThread();
      const answers: string[] = [];
      for (let turn = 1; turn <= turns; turn++) {
        const { values } = await runtime.waitRun(thread.thread_id, ask(`Item ${turn}: remember the code K${turn}X. ${PADDING}`));
        answers.push((values.messages as Array<{ content: string }>).at(-1)?.content ?? '');
      }
      const state = await runtime.getThread(thread.thread_id);
      return { answers, summary: (state.values as { summary?: string }).summary };
    } finally {
      await runtime.close();
    }
  }

  it('summarises with the run’s own model when the summary model fails', async () => {
    failingSummarizers = new Set(['summary-model']);
    const { answers, summary } = await chatFor(40);
    expect(answers.every((answer, i) => answer.startsWith(`Noted K${i + 1}X.`))).toBe(true);
    expect(summary).toContain('K1X');
    const summaryModels = new Set(model.requests.filter(isSummaryRequest).map((request) => request.model));
    expect(summaryModels).toEqual(new Set(['summary-model', 'chat-model']));
  }, 120_000);

  it('answers every turn within the window when no model can summarise, leaving the oldest turns out', async () => {
    failingSummarizers = new Set(['summary-model', 'chat-model']);
    const before = model.requests.length;
    const { answers, summary } = await chatFor(40);
    expect(answers.every((answer, i) => answer.startsWith(`Noted K${i + 1}X.`))).toBe(true);
    expect(summary).toBeUndefined();
    const chatRequests = model.requests.slice(before).filter((request) => !isSummaryRequest(request));
    expect(Math.max(...chatRequests.map(requestTokens))).toBeLessThanOrEqual(INPUT_BUDGET);
  }, 120_000);
});
