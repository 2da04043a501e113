import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { FollowUpsRepo } from '../../../src/db/repos/follow-ups-repo.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

/** A message as the buffer stores it; only `text` matters here, so entries are easy to tell apart. */
function message(text: string): Record<string, unknown> {
  return { channel: 'github', chatId: 'owner/repo#1', text };
}

/** Buffers `texts` in order, each under its own key (`k:<text>`). */
async function addAll(repo: FollowUpsRepo, threadId: string, texts: readonly string[], cap = 100): Promise<void> {
  for (const text of texts) await repo.add(threadId, `k:${text}`, message(text), cap);
}

/** Takes everything left on the thread, oldest first, and returns the texts. */
async function drain(repo: FollowUpsRepo, threadId: string): Promise<string[]> {
  return (await repo.take(threadId, 1000)).map((entry) => entry.message.text as string);
}

const range = (n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe.each(testDatabaseKinds())('FollowUpsRepo on %s', (kind) => {
  let database: DatabaseHandle;
  let repo: FollowUpsRepo;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
    repo = new FollowUpsRepo(database.db);
  });
  afterAll(() => database.close());

  describe('add', () => {
    it('keeps arrival order', async () => {
      const thread = randomUUID();
      // Keys deliberately sort the other way round, so only arrival order can explain the result.
      for (const [key, text] of [
        ['z', 'first'],
        ['m', 'second'],
        ['a', 'third'],
      ] as const) {
        expect(await repo.add(thread, key, message(text), 20)).toEqual({ added: true, dropped: 0 });
      }
      expect(await drain(repo, thread)).toEqual(['first', 'second', 'third']);
    });

    it('ignores a key already buffered on the thread, but not on another thread', async () => {
      const [thread, other] = [randomUUID(), randomUUID()];
      expect(await repo.add(thread, 'dup', message('original'), 20)).toEqual({ added: true, dropped: 0 });
      expect(await repo.add(thread, 'dup', message('copy'), 20)).toEqual({ added: false, dropped: 0 });
      expect(await repo.add(other, 'dup', message('elsewhere'), 20)).toEqual({ added: true, dropped: 0 });
      expect(await repo.count(thread)).toBe(1);
      expect(await drain(repo, thread)).toEqual(['original']);
      expect(await drain(repo, other)).toEqual(['elsewhere']);
    });

    it('drops the oldest beyond the cap and says how many', async () => {
      const thread = randomUUID();
      const neighbour = randomUUID();
      await addAll(repo, neighbour, ['untouched']);
      await addAll(repo, thread, range(3), 3);
      expect(await repo.add(thread, 'k:m3', message('m3'), 3)).toEqual({ added: true, dropped: 1 });
      // A smaller cap than the thread holds drops everything beyond it at once.
      expect(await repo.add(thread, 'k:m4', message('m4'), 2)).toEqual({ added: true, dropped: 2 });
      expect(await drain(repo, thread)).toEqual(['m3', 'm4']);
      // The cap is per thread.
      expect(await drain(repo, neighbour)).toEqual(['untouched']);
    });
  });

  describe('take', () => {
    it('removes and returns the oldest entries, up to the limit', async () => {
      const thread = randomUUID();
      await addAll(repo, thread, range(5));
      const first = await repo.take(thread, 3);
      expect(first.map((entry) => entry.message.text)).toEqual(['m0', 'm1', 'm2']);
      expect(first.map((entry) => entry.messageKey)).toEqual(['k:m0', 'k:m1', 'k:m2']);
      expect(await repo.count(thread)).toBe(2);
      expect(await drain(repo, thread)).toEqual(['m3', 'm4']);
      expect(await repo.take(thread, 3)).toEqual([]);
    });

    it('never hands one entry to two concurrent takers, and together they take all', async () => {
      // Open the pool's connections first: a connection still being opened serializes the race.
      await Promise.all(Array.from({ length: 4 }, () => database.ping()));
      for (let round = 0; round < 5; round++) {
        const thread = randomUUID();
        const texts = range(20);
        await addAll(repo, thread, texts);
        const [a, b] = await Promise.all([repo.take(thread, 10), repo.take(thread, 10)]);
        const ids = [...a, ...b].map((entry) => entry.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect([...a, ...b].map((entry) => entry.message.text as string).sort()).toEqual([...texts].sort());
        // Each batch is still oldest first.
        for (const batch of [a, b]) expect(batch.map((entry) => entry.id)).toEqual(batch.map((entry) => entry.id).sort((x, y) => x - y));
        expect(await repo.count(thread)).toBe(0);
      }
    });
  });

  describe('putBack', () => {
    it('restores a taken batch in its order, ahead of entries that arrived since', async () => {
      const thread = randomUUID();
      await addAll(repo, thread, range(4));
      const batch = await repo.take(thread, 3);
      await addAll(repo, thread, ['later']);
      await repo.putBack(thread, batch);
      expect(await drain(repo, thread)).toEqual(['m0', 'm1', 'm2', 'm3', 'later']);
    });

    it('does not double an entry whose key was buffered again meanwhile', async () => {
      const thread = randomUUID();
      await addAll(repo, thread, ['a', 'b']);
      const batch = await repo.take(thread, 2);
      // A redelivery of `a` arrives while the batch is out.
      expect(await repo.add(thread, 'k:a', message('a'), 20)).toEqual({ added: true, dropped: 0 });
      await repo.putBack(thread, batch);
      expect(await repo.count(thread)).toBe(2);
      expect((await drain(repo, thread)).sort()).toEqual(['a', 'b']);
    });

    it('accepts an empty batch', async () => {
      const thread = randomUUID();
      await repo.putBack(thread, []);
      expect(await repo.count(thread)).toBe(0);
    });
  });

  it('lists only threads that have entries', async () => {
    const [full, emptied, never] = [randomUUID(), randomUUID(), randomUUID()];
    await addAll(repo, full, ['x', 'y']);
    await addAll(repo, emptied, ['z']);
    await drain(repo, emptied);
    const threads = await repo.threads();
    expect(threads.filter((t) => t === full)).toHaveLength(1);
    expect(threads).not.toContain(emptied);
    expect(threads).not.toContain(never);
    await drain(repo, full);
    expect(await repo.threads()).not.toContain(full);
  });

  it('round-trips the message as a JSON object (nested values, unicode)', async () => {
    const thread = randomUUID();
    const stored = {
      channel: 'telegram',
      text: 'héllo 世界 👋🏽 مرحبا e\u0301 "quoted" \\ back\nslash <b>&amp;</b>',
      replyTo: { messageId: '17', nested: { deeper: [1, 2.5, -3, true, false, null, { k: 'v' }] } },
      files: [{ name: 'ファイル.txt', size: 0 }],
      empty: {},
      list: [],
      receivedAt: 1_700_000_000_123,
    };
    await repo.add(thread, 'json', stored, 20);
    // Stored as a jsonb object, not as a string holding JSON (so SQL can look inside it).
    const result = await database.db.execute(sql`select jsonb_typeof(message) as type, message->>'text' as text from follow_ups where thread_id = ${thread}`);
    const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { type: string; text: string }[];
    expect(rows).toEqual([{ type: 'object', text: stored.text }]);
    const [entry] = await repo.take(thread, 1);
    expect(entry?.message).toEqual(stored);
  });

  it('stores texts jsonb would refuse: NUL dropped, lone surrogates replaced', async () => {
    const thread = randomUUID();
    expect(await repo.add(thread, 'odd', message('a\u0000b \ud800 c \udc00 d 👋'), 20)).toEqual({ added: true, dropped: 0 });
    expect(await drain(repo, thread)).toEqual(['ab \ufffd c \ufffd d 👋']);
  });
});
