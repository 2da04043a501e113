import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { modelConfigSchema } from '../../../src/agent/config.js';
import { memoryConfigSchema } from '../../../src/agent/memory/config.js';
import { MemoryStore } from '../../../src/agent/memory/store.js';
import type { ConversationTurn, MemoryJob, UserMemory } from '../../../src/agent/memory/types.js';
import { MemoryUpdater } from '../../../src/agent/memory/updater.js';
import { createChatModel } from '../../../src/agent/models.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { createLogger } from '../../../src/logger.js';
import { type FakeChatRequest, FakeOpenAI, lastUserText } from '../../fakes/openai/index.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

const API_KEY = 'sk-memory-test';
const NOW = new Date('2025-06-01T12:00:00Z');

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = new FakeOpenAI({ apiKey: API_KEY });
  await fake.start();
});
afterAll(() => fake.stop());

/** The extraction answer the fake model gives, as JSON text. */
function extraction(answer: {
  user?: Record<string, string>;
  newFacts?: Array<{ content: string; category: string; confidence: number }>;
  factsToRemove?: string[];
}): { text: string } {
  return { text: JSON.stringify({ user: {}, newFacts: [], factsToRemove: [], ...answer }) };
}

function conversation(...texts: string[]): ConversationTurn[] {
  return texts.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }));
}

describe.each(testDatabaseKinds())('MemoryUpdater with ChatOpenAI on %s', (kind) => {
  let database: DatabaseHandle;
  let store: MemoryStore;
  let logs: Array<Record<string, unknown>>;
  let requestedModelNames: Array<string | undefined>;

  function updater(config: Record<string, unknown> = {}): MemoryUpdater {
    const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void logs.push(JSON.parse(line)) } });
    return new MemoryUpdater({
      store,
      model: (modelName) => {
        requestedModelNames.push(modelName);
        return createChatModel(
          modelConfigSchema.parse({ name: 'default', model: 'gpt-4o-mini', base_url: fake.baseURL, api_key: API_KEY, max_retries: 0 }),
        );
      },
      config: memoryConfigSchema.parse(config),
      logger,
      now: () => NOW,
    });
  }

  /** Runs one update for `userId` with the scripted answer; returns the request the model got. */
  async function learn(userId: string, reply: object, job: Partial<MemoryJob> = {}): Promise<FakeChatRequest> {
    const before = fake.requests.length;
    fake.enqueue(reply);
    await updater().update({ userId, threadId: 'thread-a', conversation: conversation('Hi, I am Ada.'), ...job });
    expect(fake.requests).toHaveLength(before + 1);
    return fake.requests[before] as FakeChatRequest;
  }

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    store = new MemoryStore(database.db);
  });
  afterAll(() => database.close());
  beforeEach(() => {
    logs = [];
    requestedModelNames = [];
  });

  it('stores the extracted facts with category, confidence and the thread as source, and the summaries', async () => {
    const user = randomUUID();

    await learn(
      user,
      extraction({
        user: { workContext: 'Data engineer at Acme.', personalContext: '', topOfMind: 'Migrating pipelines to Dagster.' },
        newFacts: [
          { content: 'Works as a data engineer at Acme.', category: 'context', confidence: 0.95 },
          { content: 'Prefers Python over Scala.', category: 'preference', confidence: 0.8 },
          { content: 'Mentors juniors.', category: 'leadership', confidence: 0.9 },
        ],
      }),
      { threadId: 'thread-42' },
    );

    const memory = await store.get(user);
    expect(memory.summaries).toEqual({
      workContext: 'Data engineer at Acme.',
      personalContext: '',
      topOfMind: 'Migrating pipelines to Dagster.',
    });
    expect(memory.facts).toHaveLength(3);
    expect(memory.facts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ content: 'Works as a data engineer at Acme.', category: 'context', confidence: 0.95, source: 'thread-42', createdAt: NOW }),
        expect.objectContaining({ content: 'Prefers Python over Scala.', category: 'preference', confidence: 0.8, source: 'thread-42' }),
        expect.objectContaining({ content: 'Mentors juniors.', category: 'context' }),
      ]),
    );
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'memory updated', userId: user, factsAdded: 3 }));
    expect(JSON.stringify(logs)).not.toMatch(/Acme|Dagster/);
  });

  it('sends the conversation and the current facts with their ids to the model', async () => {
    const user = randomUUID();
    await learn(user, extraction({ newFacts: [{ content: 'Uses Vim.', category: 'preference', confidence: 0.9 }] }));
    const [stored] = (await store.get(user)).facts;

    const request = await learn(user, extraction({}), {
      conversation: conversation('I switched from Vim to Helix last week.', 'Helix is a fine choice.'),
    });

    const prompt = lastUserText(request.messages);
    expect(prompt).toContain('I switched from Vim to Helix last week.');
    expect(prompt).toContain('Helix is a fine choice.');
    expect(prompt).toContain(stored!.id);
    expect(prompt).toContain('Uses Vim.');
    expect(request.messages[0]?.role).toBe('system');
  });

  it('drops facts below the confidence threshold', async () => {
    const user = randomUUID();

    await learn(
      user,
      extraction({
        newFacts: [
          { content: 'Lives in Lisbon.', category: 'context', confidence: 0.9 },
          { content: 'Might like jazz.', category: 'preference', confidence: 0.5 },
          { content: 'Probably owns a cat.', category: 'context', confidence: 0.69 },
        ],
      }),
    );

    expect((await store.get(user)).facts.map((f) => f.content)).toEqual(['Lives in Lisbon.']);
  });

  it('stores content that differs only in surrounding whitespace once, also across updates', async () => {
    const user = randomUUID();
    const reply = extraction({
      newFacts: [
        { content: 'Speaks Portuguese.', category: 'context', confidence: 0.9 },
        { content: '  Speaks Portuguese.\n', category: 'context', confidence: 0.9 },
      ],
    });

    await learn(user, reply);
    await learn(
      user,
      extraction({
        newFacts: [
          { content: '\tSpeaks Portuguese. ', category: 'knowledge', confidence: 0.99 },
          { content: 'Learning Japanese.', category: 'goal', confidence: 0.9 },
        ],
      }),
    );

    const facts = (await store.get(user)).facts.map((f) => `${f.category}: ${f.content}`);
    expect(facts.sort()).toEqual(['context: Speaks Portuguese.', 'goal: Learning Japanese.']);
  });

  it('keeps at most max_facts, the most confident', async () => {
    const user = randomUUID();
    const before = fake.requests.length;
    fake.enqueue(
      extraction({
        newFacts: [
          { content: 'Fact at 0.75.', category: 'context', confidence: 0.75 },
          { content: 'Fact at 0.95.', category: 'context', confidence: 0.95 },
          { content: 'Fact at 0.85.', category: 'context', confidence: 0.85 },
          { content: 'Fact at 0.9.', category: 'context', confidence: 0.9 },
        ],
      }),
    );

    await updater({ max_facts: 2 }).update({ userId: user, threadId: 't', conversation: conversation('Hi.') });

    expect(fake.requests).toHaveLength(before + 1);
    expect((await store.get(user)).facts.map((f) => f.content).sort()).toEqual(['Fact at 0.9.', 'Fact at 0.95.']);
  });

  it("removes a listed fact of the user, never another user's, and leaves other users untouched", async () => {
    const [ada, bob] = [randomUUID(), randomUUID()];
    await learn(
      bob,
      extraction({
        user: { workContext: 'Designer.', personalContext: 'Plays chess.', topOfMind: 'Portfolio.' },
        newFacts: [{ content: 'Uses Figma.', category: 'preference', confidence: 0.9 }],
      }),
    );
    await learn(ada, extraction({ newFacts: [{ content: 'Uses Vim.', category: 'preference', confidence: 0.9 }] }));
    const bobBefore: UserMemory = await store.get(bob);
    const [adasFact] = (await store.get(ada)).facts;
    const [bobsFact] = bobBefore.facts;

    await learn(
      ada,
      extraction({
        user: { workContext: 'Backend engineer.', personalContext: '', topOfMind: '' },
        // Uses Figma. is Bob's content: Ada may have the same fact, it never touches his.
        newFacts: [
          { content: 'Uses Helix.', category: 'preference', confidence: 0.9 },
          { content: 'Uses Figma.', category: 'preference', confidence: 0.9 },
        ],
        factsToRemove: [adasFact!.id, bobsFact!.id],
      }),
    );

    expect((await store.get(ada)).facts.map((f) => f.content).sort()).toEqual(['Uses Figma.', 'Uses Helix.']);
    expect((await store.get(ada)).summaries.workContext).toBe('Backend engineer.');
    expect(await store.get(bob)).toEqual(bobBefore);
  });

  it("clears one user's memory and nobody else's", async () => {
    const [ada, bob] = [randomUUID(), randomUUID()];
    const facts = [
      { content: 'Fact one.', category: 'goal', confidence: 0.9 },
      { content: 'Fact two.', category: 'goal', confidence: 0.9 },
    ];
    await learn(ada, extraction({ user: { workContext: 'Writer.' }, newFacts: facts }));
    await learn(bob, extraction({ user: { workContext: 'Editor.' }, newFacts: facts }));
    const bobBefore = await store.get(bob);

    expect(await store.clear(ada)).toBe(2);

    expect(await store.get(ada)).toEqual({ summaries: { workContext: '', personalContext: '', topOfMind: '' }, facts: [] });
    expect(await store.get(bob)).toEqual(bobBefore);
  });

  it.each([
    ['an HTTP 500', { fail: { status: 500, message: 'overloaded' } }, 'memory update skipped: the model call failed'],
    ['an answer that is not JSON', { text: 'Sure, I will remember that Ada likes tea.' }, 'memory update skipped: the model answer holds no JSON object'],
  ])('leaves memory unchanged on %s, logging a warning without text', async (_, reply, message) => {
    const user = randomUUID();
    await learn(user, extraction({ user: { topOfMind: 'Tea.' }, newFacts: [{ content: 'Likes tea.', category: 'preference', confidence: 0.9 }] }));
    const before = await store.get(user);

    await learn(user, reply, { conversation: conversation('My password is hunter2, by the way.') });

    expect(await store.get(user)).toEqual(before);
    expect(logs).toContainEqual(expect.objectContaining({ level: 40, msg: message, userId: user }));
    expect(JSON.stringify(logs)).not.toMatch(/hunter2|likes tea|overloaded/i);
  });

  it('uses memory.model_name, else the job’s model, for extraction', async () => {
    const user = randomUUID();
    fake.enqueue(extraction({}), extraction({}));

    await updater({ model_name: 'cheap' }).update({ userId: user, threadId: 't', conversation: conversation('Hi.'), modelName: 'big' });
    await updater().update({ userId: user, threadId: 't', conversation: conversation('Hi.'), modelName: 'big' });

    expect(requestedModelNames).toEqual(['cheap', 'big']);
  });

  it('does not call the model for an empty conversation', async () => {
    const before = fake.requests.length;

    await updater().update({ userId: randomUUID(), threadId: 't', conversation: [] });

    expect(fake.requests).toHaveLength(before);
  });
});
