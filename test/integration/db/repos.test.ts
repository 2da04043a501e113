import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { SqlDedupeStore } from '../../../src/db/repos/inbound-dedupe-repo.js';
import { ThreadMapRepo } from '../../../src/db/repos/thread-map-repo.js';
import { type DedupeKey, MemoryDedupeStore } from '../../../src/manager/dedupe.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

function key(messageId: string = randomUUID()): DedupeKey {
  return { channel: 'telegram', workspaceId: '42', chatId: '42', messageId };
}

describe.each(testDatabaseKinds())('repositories on %s', (kind) => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(() => database.close());

  describe('SqlDedupeStore', () => {
    it('accepts a message once, and again after a release', async () => {
      const store = new SqlDedupeStore(database.db);
      const k = key();
      expect(await store.acquire(k)).toBe(true);
      expect(await store.acquire({ ...k })).toBe(false);
      await store.release(k);
      expect(await store.acquire(k)).toBe(true);
    });

    it('lets exactly one of many concurrent deliveries through', async () => {
      const store = new SqlDedupeStore(database.db);
      const k = key();
      const results = await Promise.all(Array.from({ length: 8 }, () => store.acquire({ ...k })));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('keeps keys of different workspaces and chats apart', async () => {
      const store = new SqlDedupeStore(database.db);
      const id = randomUUID();
      expect(await store.acquire({ ...key(id), workspaceId: 'a' })).toBe(true);
      expect(await store.acquire({ ...key(id), workspaceId: 'b' })).toBe(true);
      expect(await store.acquire({ ...key(id), workspaceId: 'a', chatId: 'other' })).toBe(true);
    });

    it('accepts a redelivery again once the TTL ran out', async () => {
      const store = new SqlDedupeStore(database.db, 60_000);
      const k = key();
      expect(await store.acquire(k)).toBe(true);
      await database.db.execute(sql`update inbound_dedupe set first_seen = now() - interval '2 minutes' where message_id = ${k.messageId}`);
      expect(await store.acquire(k)).toBe(true);
      expect(await store.acquire(k)).toBe(false);
    });
  });

  describe('ThreadMapRepo', () => {
    it('keeps the first mapping of a conversation and lets /new replace it', async () => {
      const repo = new ThreadMapRepo(database.db);
      const conversation = { channel: 'telegram', chatId: randomUUID(), topicId: undefined };
      const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
      expect(await repo.find(conversation)).toBeUndefined();
      expect(await repo.insertIfAbsent(conversation, first as string, 'u1')).toBe(first);
      expect(await repo.insertIfAbsent(conversation, second as string, 'u1')).toBe(first);
      await repo.replace(conversation, third as string, 'u1');
      expect(await repo.find(conversation)).toBe(third);
    });

    it('maps topics of one chat separately', async () => {
      const repo = new ThreadMapRepo(database.db);
      const chatId = randomUUID();
      const [a, b] = [randomUUID(), randomUUID()];
      await repo.insertIfAbsent({ channel: 'telegram', chatId, topicId: '1' }, a as string, 'u');
      await repo.insertIfAbsent({ channel: 'telegram', chatId, topicId: '2' }, b as string, 'u');
      expect(await repo.find({ channel: 'telegram', chatId, topicId: '1' })).toBe(a);
      expect(await repo.find({ channel: 'telegram', chatId, topicId: '2' })).toBe(b);
      expect(await repo.find({ channel: 'telegram', chatId })).toBeUndefined();
    });
  });
});

describe('MemoryDedupeStore', () => {
  it('forgets keys after the TTL and never holds more than its cap', async () => {
    let now = 0;
    const store = new MemoryDedupeStore({ ttlMs: 1000, maxEntries: 3, now: () => now });
    const keys = [key('1'), key('2'), key('3'), key('4')];
    for (const k of keys) expect(await store.acquire(k)).toBe(true);
    expect(await store.acquire(key('4'))).toBe(false);
    expect(await store.acquire(key('1'))).toBe(true); // evicted by the cap
    now = 2000;
    expect(await store.acquire(key('4'))).toBe(true); // expired
  });
});
