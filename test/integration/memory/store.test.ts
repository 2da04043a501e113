import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/agent/memory/store.js';
import type { MemoryUpdate, ProposedFact } from '../../../src/agent/memory/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

const OPTIONS = { source: 'thread-1', maxFacts: 100, confidenceThreshold: 0.7, now: new Date('2025-03-01T00:00:00Z') };

function update(newFacts: ProposedFact[] = [], rest: Partial<MemoryUpdate> = {}): MemoryUpdate {
  return { summaries: {}, newFacts, factsToRemove: [], ...rest };
}

function fact(content: string, confidence = 0.9): ProposedFact {
  return { content, category: 'context', confidence };
}

// Each case also with the cache a sole process keeps (PGlite in the server): every write through
// the store must show in the next read.
const CASES = testDatabaseKinds().flatMap((kind) => [[kind, 0] as const, [kind, 256] as const]);

describe.each(CASES)('MemoryStore on %s, %i users cached', (kind, cachedUsers) => {
  let database: DatabaseHandle;
  let store: MemoryStore;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
    store = new MemoryStore(database.db, { cachedUsers });
  });
  afterAll(() => database.close());

  it('gives empty memory for an unknown user', async () => {
    expect(await store.get(randomUUID())).toEqual({
      summaries: { workContext: '', personalContext: '', topOfMind: '' },
      facts: [],
    });
  });

  it('forgets everything about a user at once when asked, and only that user', async () => {
    const [user, other] = [randomUUID(), randomUUID()];
    await store.apply(user, update([fact('Prefers Go.')], { summaries: { workContext: 'SRE at Acme.' } }), OPTIONS);
    await store.apply(other, update([fact('Prefers Rust.')]), OPTIONS);
    expect((await store.get(user)).facts.map((f) => f.content)).toEqual(['Prefers Go.']);
    expect(await store.clear(user)).toBe(1);
    expect(await store.get(user)).toEqual({ summaries: { workContext: '', personalContext: '', topOfMind: '' }, facts: [] });
    expect((await store.get(other)).facts.map((f) => f.content)).toEqual(['Prefers Rust.']);
  });

  it("forgets one fact only among the user's own: another's id, an unknown or a malformed one changes nothing", async () => {
    const [user, other] = [randomUUID(), randomUUID()];
    await store.apply(user, update([fact('Prefers Go.'), fact('Uses vim.')]), OPTIONS);
    await store.apply(other, update([fact('Prefers Rust.')]), OPTIONS);
    const [othersFact] = (await store.get(other)).facts;
    const goFact = (await store.get(user)).facts.find((f) => f.content === 'Prefers Go.');

    expect(await store.deleteFact(user, othersFact?.id as string)).toBe(false);
    expect(await store.deleteFact(user, randomUUID())).toBe(false);
    expect(await store.deleteFact(user, 'not-a-uuid')).toBe(false);
    expect((await store.get(other)).facts.map((f) => f.content)).toEqual(['Prefers Rust.']);

    expect(await store.deleteFact(user, goFact?.id as string)).toBe(true);
    expect((await store.get(user)).facts.map((f) => f.content)).toEqual(['Uses vim.']);
    expect(await store.deleteFact(user, goFact?.id as string)).toBe(false);
  });

  it('replaces only the summaries an update gives non-blank', async () => {
    const user = randomUUID();
    await store.apply(user, update([], { summaries: { workContext: 'SRE at Acme.', topOfMind: 'On-call rotation.' } }), OPTIONS);

    const changes = await store.apply(user, update([], { summaries: { workContext: ' ', topOfMind: 'Kubernetes upgrade.' } }), OPTIONS);

    expect(changes.summariesUpdated).toBe(1);
    expect((await store.get(user)).summaries).toEqual({
      workContext: 'SRE at Acme.',
      personalContext: '',
      topOfMind: 'Kubernetes upgrade.',
    });
  });

  it('lists facts newest first', async () => {
    const user = randomUUID();
    await store.apply(user, update([fact('Old fact.')]), { ...OPTIONS, now: new Date('2025-01-01') });
    await store.apply(user, update([fact('New fact.')]), { ...OPTIONS, now: new Date('2025-02-01') });

    expect((await store.get(user)).facts.map((f) => f.content)).toEqual(['New fact.', 'Old fact.']);
  });

  it('keeps the most confident copy of content repeated within one update', async () => {
    const user = randomUUID();

    const changes = await store.apply(user, update([fact('Uses Go.', 0.75), fact(' Uses Go. ', 0.95)]), OPTIONS);

    expect(changes.factsAdded).toBe(1);
    expect((await store.get(user)).facts).toMatchObject([{ content: 'Uses Go.', confidence: 0.95 }]);
  });

  it('stores one fact when concurrent updates bring the same content', async () => {
    const user = randomUUID();

    const results = await Promise.all(
      Array.from({ length: 4 }, () => new MemoryStore(database.db).apply(user, update([fact('Lives in Oslo.')]), OPTIONS)),
    );

    expect(results.map((r) => r.factsAdded).sort()).toEqual([0, 0, 0, 1]);
    expect((await store.get(user)).facts).toHaveLength(1);
  });

  it('evicts the lowest confidence first, then the oldest', async () => {
    const user = randomUUID();
    const capped = { ...OPTIONS, maxFacts: 2 };
    await store.apply(user, update([fact('Older, 0.8.', 0.8)]), { ...capped, now: new Date('2025-01-01') });
    await store.apply(user, update([fact('Newer, 0.8.', 0.8)]), { ...capped, now: new Date('2025-02-01') });

    const changes = await store.apply(user, update([fact('Best, 0.99.', 0.99)]), { ...capped, now: new Date('2025-03-01') });

    expect(changes.factsEvicted).toBe(1);
    expect((await store.get(user)).facts.map((f) => f.content)).toEqual(['Best, 0.99.', 'Newer, 0.8.']);
  });

  it('holds the cap when updates of one user run concurrently', async () => {
    const user = randomUUID();
    const capped = { ...OPTIONS, maxFacts: 3 };

    await Promise.all(
      Array.from({ length: 6 }, (_, i) => store.apply(user, update([fact(`Fact ${i}a.`), fact(`Fact ${i}b.`)]), capped)),
    );

    expect((await store.get(user)).facts).toHaveLength(3);
  });

  it('ignores malformed and unknown ids in factsToRemove', async () => {
    const user = randomUUID();
    await store.apply(user, update([fact('Keeps this.')]), OPTIONS);

    const changes = await store.apply(user, update([], { factsToRemove: ['fact_1', '', randomUUID()] }), OPTIONS);

    expect(changes.factsRemoved).toBe(0);
    expect((await store.get(user)).facts).toHaveLength(1);
  });

  it('can replace a fact with the same content in one update', async () => {
    const user = randomUUID();
    await store.apply(user, update([fact('Works at Acme.', 0.75)]), OPTIONS);
    const [old] = (await store.get(user)).facts;

    await store.apply(user, update([{ content: 'Works at Acme.', category: 'context', confidence: 1 }], { factsToRemove: [old!.id] }), OPTIONS);

    expect((await store.get(user)).facts).toMatchObject([{ content: 'Works at Acme.', confidence: 1 }]);
  });
});
