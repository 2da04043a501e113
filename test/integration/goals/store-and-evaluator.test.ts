import { randomUUID } from 'node:crypto';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { evaluateGoal, type GoalEvaluation, GoalStore, toGoalJson } from '../../../src/agent/goals/index.js';
import { createChatModel } from '../../../src/agent/models.js';
import { type DatabaseHandle, schema } from '../../../src/db/index.js';
import { GOAL_VERDICTS } from '../../../src/db/schema/index.js';
import { AppError, NotFoundError } from '../../../src/errors.js';
import { FakeOpenAI } from '../../fakes/openai/index.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

function evaluation(overrides: Partial<GoalEvaluation> = {}): GoalEvaluation {
  return {
    verdict: 'not_met_yet',
    reason: 'Two tests still fail.',
    evidence: 'The assistant reported 2 failures.',
    action: 'continued',
    evaluatedAt: '2025-01-02T03:04:05.000Z',
    ...overrides,
  };
}

describe.each(testDatabaseKinds())('GoalStore on %s', (kind) => {
  let database: DatabaseHandle;
  let store: GoalStore;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    store = new GoalStore(database.db);
  });
  afterAll(() => database.close());

  async function newThread(): Promise<string> {
    const id = randomUUID();
    await database.db.insert(schema.threads).values({ id });
    return id;
  }

  it("lists goals with their thread's metadata, newest change first, one owner's only when asked", async () => {
    const [alice, bob] = [randomUUID(), randomUUID()];
    const owned = async (owner: string) => {
      const id = randomUUID();
      await database.db.insert(schema.threads).values({ id, metadata: { owner_user_id: owner, channel_source: { provider: 'web', chat_id: 'c1' } } });
      return id;
    };
    const [first, second, bobs] = [await owned(alice), await owned(alice), await owned(bob)];
    await store.set(first, 'first goal');
    await store.set(bobs, 'bob goal');
    await store.set(second, 'second goal');

    const alices = await store.list({ ownerUserId: alice, limit: 10 });
    expect(alices.map((entry) => entry.goal.objective)).toEqual(['second goal', 'first goal']);
    expect(alices[0]?.threadMetadata).toMatchObject({ channel_source: { provider: 'web', chat_id: 'c1' } });
    expect((await store.list({ ownerUserId: bob, limit: 10 })).map((entry) => entry.goal.threadId)).toEqual([bobs]);
    expect(await store.list({ ownerUserId: randomUUID(), limit: 10 })).toEqual([]);
    expect(await store.list({ ownerUserId: alice, limit: 1 })).toHaveLength(1);
    const everyone = (await store.list({ limit: 1000 })).map((entry) => entry.goal.threadId);
    expect(everyone).toEqual(expect.arrayContaining([first, second, bobs]));
  });

  it('sets, reads, replaces and clears the one goal of a thread', async () => {
    const threadId = await newThread();
    expect(await store.get(threadId)).toBeUndefined();

    const first = await store.set(threadId, '  Make   CI\n green ', { maxContinuations: 3 });
    expect(first).toMatchObject({ threadId, objective: 'Make CI green', maxContinuations: 3 });
    expect(first.lastEvaluation).toBeUndefined();
    expect(await store.get(threadId)).toEqual(first);

    await store.recordEvaluation({ threadId, objective: 'Make CI green', evaluation: evaluation() });
    const replaced = await store.set(threadId, 'Ship the release');
    expect(replaced).toMatchObject({ objective: 'Ship the release', maxContinuations: 8 });
    expect(replaced.lastEvaluation).toBeUndefined();
    expect(await store.get(threadId)).toEqual(replaced);

    expect(await store.clear(threadId)).toBe(true);
    expect(await store.get(threadId)).toBeUndefined();
    expect(await store.clear(threadId)).toBe(false);
  });

  it('refuses a goal for a thread that does not exist', async () => {
    await expect(store.set(randomUUID(), 'Anything')).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.set('not-a-uuid', 'Anything')).rejects.toMatchObject({ status: 404 });
    expect(await store.get('not-a-uuid')).toBeUndefined();
  });

  it('refuses an invalid objective or cap with 422 and keeps the old goal', async () => {
    const threadId = await newThread();
    await store.set(threadId, 'Keep me');
    await expect(store.set(threadId, '   ')).rejects.toMatchObject({ code: 'UNPROCESSABLE', status: 422 });
    await expect(store.set(threadId, 'x'.repeat(4001))).rejects.toBeInstanceOf(AppError);
    await expect(store.set(threadId, 'New', { maxContinuations: 9 })).rejects.toMatchObject({ status: 422 });
    expect((await store.get(threadId))?.objective).toBe('Keep me');
  });

  it('stores every verdict with its reason and keeps the latest on the goal', async () => {
    const threadId = await newThread();
    const runId = randomUUID();
    await store.set(threadId, 'Make CI green');
    const standDowns = GOAL_VERDICTS.filter((v) => v !== 'satisfied');
    for (const verdict of standDowns) {
      const isCurrent = await store.recordEvaluation({
        threadId,
        runId,
        objective: 'Make CI green',
        evaluation: evaluation({ verdict, reason: `reason for ${verdict}`, action: 'stood_down', standDownReason: `stop: ${verdict}` }),
      });
      expect(isCurrent).toBe(true);
    }
    const goal = await store.get(threadId);
    expect(goal?.lastEvaluation).toEqual({
      verdict: 'evaluation_failed',
      reason: 'reason for evaluation_failed',
      evidence: 'The assistant reported 2 failures.',
      action: 'stood_down',
      standDownReason: 'stop: evaluation_failed',
      evaluatedAt: '2025-01-02T03:04:05.000Z',
    });
    expect(toGoalJson(goal as NonNullable<typeof goal>).last_evaluation).toEqual({
      verdict: 'evaluation_failed',
      reason: 'reason for evaluation_failed',
      evidence: 'The assistant reported 2 failures.',
      action: 'stood_down',
      stand_down_reason: 'stop: evaluation_failed',
      evaluated_at: '2025-01-02T03:04:05.000Z',
    });

    await store.recordEvaluation({
      threadId,
      runId,
      objective: 'Make CI green',
      evaluation: evaluation({ verdict: 'satisfied', reason: 'CI is green.', action: 'cleared' }),
    });
    expect(await store.get(threadId)).toBeUndefined();

    const history = await store.evaluations(threadId, 10);
    expect(history.map((e) => [e.verdict, e.reason])).toEqual(
      [...standDowns.map((v) => [v, `reason for ${v}`]), ['satisfied', 'CI is green.']].reverse(),
    );
    expect(history[0]).toMatchObject({ runId, objective: 'Make CI green', action: 'cleared' });
    expect(history[0]).not.toHaveProperty('standDownReason');
    expect(history[1]).toMatchObject({ action: 'stood_down', standDownReason: 'stop: evaluation_failed' });
    expect(await store.evaluations(threadId, 2)).toHaveLength(2);
  });

  it('leaves a goal replaced or cleared during the evaluation alone', async () => {
    const threadId = await newThread();
    await store.set(threadId, 'Old goal');
    await store.set(threadId, 'New goal');
    const cleared = evaluation({ verdict: 'satisfied', action: 'cleared' });
    expect(await store.recordEvaluation({ threadId, objective: 'Old goal', evaluation: cleared })).toBe(false);
    expect(await store.recordEvaluation({ threadId, objective: 'Old goal', evaluation: evaluation() })).toBe(false);
    const goal = await store.get(threadId);
    expect(goal?.objective).toBe('New goal');
    expect(goal?.lastEvaluation).toBeUndefined();

    await store.clear(threadId);
    expect(await store.recordEvaluation({ threadId, objective: 'New goal', evaluation: evaluation() })).toBe(false);
    expect(await store.get(threadId)).toBeUndefined();
    expect(await store.evaluations(threadId, 10)).toHaveLength(3);
  });

  it('refuses to record a verdict for a thread that does not exist', async () => {
    await expect(
      store.recordEvaluation({ threadId: randomUUID(), objective: 'x', evaluation: evaluation() }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('renders the HTTP shape in snake_case', async () => {
    const threadId = await newThread();
    const goal = await store.set(threadId, 'Write the docs', { maxContinuations: 0 });
    expect(toGoalJson(goal)).toEqual({
      objective: 'Write the docs',
      max_continuations: 0,
      last_evaluation: null,
      created_at: goal.createdAt.toISOString(),
      updated_at: goal.updatedAt.toISOString(),
    });
  });
});

describe('evaluateGoal against an OpenAI-compatible model', () => {
  let fake: FakeOpenAI;
  let model: ChatOpenAI;

  const conversation: BaseMessage[] = [
    new HumanMessage('Make CI green'),
    new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'bash', args: { command: 'npm test' } }] }),
    new ToolMessage({ content: 'SECRET_TOOL_OUTPUT 3 failing', tool_call_id: 'call_1' }),
    new AIMessage('I fixed the lint job; two unit tests still fail.'),
    new HumanMessage({ content: 'HIDDEN_CONTINUATION keep going', additional_kwargs: { hide_from_ui: true } }),
    new AIMessage('All tests pass now and CI is green.'),
  ];

  beforeAll(async () => {
    fake = new FakeOpenAI({ apiKey: 'sk-test' });
    await fake.start();
    model = createChatModel({
      name: 'evaluator',
      model: 'gpt-4o-mini',
      base_url: fake.baseURL,
      api_key: 'sk-test',
      timeout_seconds: 10,
      max_retries: 0,
    });
  });
  afterAll(() => fake.stop());
  beforeEach(() => {
    fake.requests.length = 0;
  });

  const judge = () => evaluateGoal({ model, objective: 'Make CI green', messages: conversation });

  it('sends the objective and the visible conversation only', async () => {
    fake.enqueue({ text: '{"verdict":"satisfied","reason":"CI is green.","evidence":"Last reply."}' });
    await judge();
    const [request] = await fake.waitForRequests(1);
    const prompt = JSON.stringify(request?.messages);
    expect(prompt).toContain('Make CI green');
    expect(prompt).toContain('I fixed the lint job; two unit tests still fail.');
    expect(prompt).toContain('All tests pass now and CI is green.');
    expect(prompt).not.toContain('SECRET_TOOL_OUTPUT');
    expect(prompt).not.toContain('HIDDEN_CONTINUATION');
    expect(prompt).not.toContain('npm test');
  });

  it.each([
    ['plain JSON', '{"verdict":"satisfied","reason":"CI is green.","evidence":"Last reply says so."}', 'satisfied', 'CI is green.'],
    ['fenced JSON', '```json\n{"verdict":"not_met_yet","reason":"No CI run shown.","evidence":""}\n```', 'not_met_yet', 'No CI run shown.'],
    ['a think block before JSON', '<think>The user wants {"verdict":"satisfied"}…</think>{"verdict":"needs_user_input","reason":"Which branch?","evidence":""}', 'needs_user_input', 'Which branch?'],
    ['a blocked answer', '{"verdict":"blocked","reason":"CI is down.","evidence":""}', 'blocked', 'CI is down.'],
    ['garbage', 'Looks good to me!', 'evaluation_failed', 'evaluator answer held no JSON object'],
    ['an unknown verdict', '{"verdict":"maybe","reason":"unsure"}', 'evaluation_failed', 'evaluator answer had no known verdict'],
  ])('maps %s to its verdict', async (_what, text, verdict, reason) => {
    fake.enqueue({ text });
    expect(await judge()).toMatchObject({ verdict, reason });
  });

  it('turns a model error into evaluation_failed without the endpoint text', async () => {
    fake.enqueue({ fail: { status: 500, message: 'upstream exploded with sk-test' } });
    expect(await judge()).toEqual({ verdict: 'evaluation_failed', reason: 'evaluator model failed (HTTP 500)', evidence: '' });
  });

  it('reports a cancelled evaluation as evaluation_failed', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await evaluateGoal({ model, objective: 'Make CI green', messages: conversation, signal: controller.signal });
    expect(result).toEqual({ verdict: 'evaluation_failed', reason: 'evaluation cancelled', evidence: '' });
  });

  it('does not call the model when there is no visible assistant reply', async () => {
    const result = await evaluateGoal({ model, objective: 'Make CI green', messages: conversation.slice(0, 3) });
    expect(result).toMatchObject({ verdict: 'evaluation_failed', reason: 'no visible assistant reply to evaluate' });
    expect(fake.requests).toHaveLength(0);
  });
});
