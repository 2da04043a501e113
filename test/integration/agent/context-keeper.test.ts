import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../../src/agent/config.js';
import { summarizationConfigSchema } from '../../../src/agent/context/config.js';
import { ContextKeeper } from '../../../src/agent/context/keeper.js';
import { messagesTokens } from '../../../src/agent/context/window.js';
import { ChatModels } from '../../../src/agent/models.js';
import { silentLogger } from '../../../src/logger.js';
import { type FakeChatRequest, FakeOpenAI } from '../../fakes/openai/index.js';
import { isSummaryRequest } from '../../helpers/summaries.js';

/** The context keeper with the real `ChatOpenAI` against a fake endpoint. */

let fake: FakeOpenAI;
let model: ModelConfig;
let clock: number;
let keeper: ContextKeeper;
let summariserFails: boolean;

const LONG_TEXT = 'words of a long message '.repeat(40);
/** Eight turns of ~500 tokens: over a 4,096-token window, and more than its summariser reads at once. */
const HISTORY = Array.from({ length: 8 }, (_, i) => [new HumanMessage(`turn ${i} ${LONG_TEXT}`), new AIMessage(`answer ${i} ${LONG_TEXT}`)]).flat();

function summaryRequests(): FakeChatRequest[] {
  return fake.requests.filter(isSummaryRequest);
}

beforeAll(async () => {
  fake = new FakeOpenAI({ apiKey: 'sk-test' });
  fake.respond = () => (summariserFails ? { fail: { status: 500 } } : { text: 'They talked about eight things.' });
  await fake.start();
  model = { name: 'small', model: 'gpt-4o-mini', base_url: fake.baseURL, api_key: 'sk-test', timeout_seconds: 10, max_retries: 0, context_window: 4_096 };
});
afterAll(() => fake.stop());
beforeEach(() => {
  clock = 1_000_000;
  summariserFails = false;
  fake.requests.length = 0;
  keeper = new ContextKeeper({
    config: summarizationConfigSchema.parse({}),
    models: [model],
    chatModels: new ChatModels([model]),
    logger: silentLogger(),
    now: () => clock,
  });
});

describe('ContextKeeper', () => {
  it('leaves a history that fits as it is, with the summary first', async () => {
    const messages = HISTORY.slice(0, 2);
    const fitted = await keeper.fit({ model, fixedTokens: () => 500, summary: 'Earlier: hello.', messages, threadId: 't' });
    expect(fitted.folded).toBeUndefined();
    expect(fitted.messages.slice(1)).toEqual(messages);
    expect(String(fitted.messages[0]?.content)).toContain('Earlier: hello.');
    expect(summaryRequests()).toHaveLength(0);
  });

  it('folds the oldest turns into the summary and keeps the newest within the budget', async () => {
    const fitted = await keeper.fit({ model, fixedTokens: () => 500, summary: undefined, messages: HISTORY, threadId: 't' });
    expect(fitted.folded?.summary).toBe('They talked about eight things.');
    expect(fitted.folded?.kept.at(-1)).toBe(HISTORY.at(-1));
    expect(fitted.folded?.kept[0]?.getType()).toBe('human');
    expect(500 + messagesTokens(fitted.messages)).toBeLessThanOrEqual(3_072);
    // The summariser read the folded turns, oldest first, in calls that each fit its window, and not the kept ones.
    const reads = summaryRequests().map((request) => String(request.messages[1]?.content));
    expect(reads.length).toBeGreaterThan(1);
    expect(reads[0]).toContain('turn 0 ');
    expect(reads.some((read) => read.includes('turn 7 '))).toBe(false);
    expect(Math.max(...reads.map((read) => read.length / 4))).toBeLessThanOrEqual(3_072);
    // Each call after the first builds on the summary so far.
    expect(reads[1]).toContain('<summary_so_far>\nThey talked about eight things.\n</summary_so_far>');
  });

  it('after a failed fold, asks the summariser again only a minute later, and fits the request meanwhile', async () => {
    summariserFails = true;
    const first = await keeper.fit({ model, fixedTokens: () => 500, summary: undefined, messages: HISTORY, threadId: 't' });
    expect(first.folded).toBeUndefined();
    expect(500 + messagesTokens(first.messages)).toBeLessThanOrEqual(3_072);
    expect(summaryRequests()).toHaveLength(1);

    clock += 59_000;
    await keeper.fit({ model, fixedTokens: () => 500, summary: undefined, messages: HISTORY, threadId: 't' });
    expect(summaryRequests()).toHaveLength(1);
    // Another thread is not held back by this one's failure.
    await keeper.fit({ model, fixedTokens: () => 500, summary: undefined, messages: HISTORY, threadId: 'other' });
    expect(summaryRequests()).toHaveLength(2);

    summariserFails = false;
    clock += 1_000;
    const later = await keeper.fit({ model, fixedTokens: () => 500, summary: undefined, messages: HISTORY, threadId: 't' });
    expect(summaryRequests().length).toBeGreaterThan(2);
    expect(later.folded?.summary).toBe('They talked about eight things.');
  });

  it('does nothing for a model without a context window', async () => {
    const unbounded = { ...model, context_window: undefined };
    const fitted = await keeper.fit({ model: unbounded, fixedTokens: () => 500, summary: undefined, messages: HISTORY, threadId: 't' });
    expect(fitted.messages).toEqual(HISTORY);
    expect(summaryRequests()).toHaveLength(0);
  });
});
