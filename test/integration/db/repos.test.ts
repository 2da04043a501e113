import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DedupeKey, MemoryTurnJournal } from '../../../src/channel/turn-journal.js';
import type { InboundMessage } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { ThreadMapRepo } from '../../../src/db/repos/thread-map-repo.js';
import { SqlTurnJournal } from '../../../src/db/repos/turn-journal-repo.js';
import { inboundDedupe } from '../../../src/db/schema/index.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

function key(messageId: string = randomUUID(), channel = 'telegram'): DedupeKey {
  return { channel, workspaceId: '42', chatId: '42', messageId };
}

/** The message a worker would journal under `k`, with a placeholder to resume into. */
function messageOf(k: DedupeKey): InboundMessage {
  return {
    channel: k.channel,
    chatId: k.chatId,
    userId: '7',
    workspaceId: k.workspaceId,
    messageId: k.messageId,
    text: `question ${k.messageId}`,
    kind: 'chat',
    isPrivateChat: true,
    replyTo: { messageId: k.messageId, placeholderId: `p-${k.messageId}` },
    receivedAt: 1_700_000_000_000,
  };
}

describe.each(testDatabaseKinds())('repositories on %s', (kind) => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(() => database.close());

  describe('SqlTurnJournal', () => {
    it('accepts a message once, and again after a release', async () => {
      const store = new SqlTurnJournal(database.db);
      const k = key();
      expect(await store.accept(k, messageOf(k))).toBe(true);
      expect(await store.accept({ ...k }, messageOf(k))).toBe(false);
      await store.release(k);
      expect(await store.accept(k, messageOf(k))).toBe(true);
    });

    it('lets exactly one of many concurrent deliveries through', async () => {
      const store = new SqlTurnJournal(database.db);
      const k = key();
      const results = await Promise.all(Array.from({ length: 8 }, () => store.accept({ ...k }, messageOf(k))));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('keeps keys of different workspaces and chats apart', async () => {
      const store = new SqlTurnJournal(database.db);
      const id = randomUUID();
      expect(await store.accept({ ...key(id), workspaceId: 'a' }, messageOf(key(id)))).toBe(true);
      expect(await store.accept({ ...key(id), workspaceId: 'b' }, messageOf(key(id)))).toBe(true);
      expect(await store.accept({ ...key(id), workspaceId: 'a', chatId: 'other' }, messageOf(key(id)))).toBe(true);
    });

    it('accepts a redelivery of a finished turn again once the TTL ran out, never one still in flight', async () => {
      const store = new SqlTurnJournal(database.db, 60_000);
      const [finished, inFlight] = [key(), key()];
      for (const k of [finished, inFlight]) expect(await store.accept(k, messageOf(k))).toBe(true);
      await store.finish(finished);
      await database.db.execute(sql`update inbound_dedupe set first_seen = now() - interval '2 minutes' where message_id in (${finished.messageId}, ${inFlight.messageId})`);
      expect(await store.accept(finished, messageOf(finished))).toBe(true);
      expect(await store.accept(finished, messageOf(finished))).toBe(false);
      expect(await store.accept(inFlight, messageOf(inFlight))).toBe(false);
    });

    it('gives back the unfinished turns, message and reply target as accepted, counting each time they are taken up', async () => {
      const store = new SqlTurnJournal(database.db);
      const channel = `resume-${randomUUID()}`;
      const [answered, interrupted] = [key(undefined, channel), key(undefined, channel)];
      for (const k of [answered, interrupted]) await store.accept(k, messageOf(k));
      await store.finish(answered);
      const ours = async () => (await store.resumeUnfinished()).filter((turn) => turn.message.channel === channel);
      const [first] = await ours();
      expect(first?.message).toEqual(messageOf(interrupted));
      expect(first?.resumes).toBe(1);
      expect(Math.abs((first?.acceptedAt ?? 0) - Date.now())).toBeLessThan(60_000);
      expect((await ours()).map((turn) => turn.resumes)).toEqual([2]);
      await store.finish(interrupted);
      expect(await ours()).toEqual([]);
      // A finished turn's text is not kept.
      const kept = await database.db.select({ message: inboundDedupe.message }).from(inboundDedupe).where(eq(inboundDedupe.channel, channel));
      expect(kept).toEqual([{ message: null }, { message: null }]);
    });
  });

  describe('ThreadMapRepo', () => {
    it('keeps the first mapping of a conversation and lets /new replace it', async () => {
      const repo = new ThreadMapRepo(database.db);
      const conversation = { channel: 'telegram', chatId: randomUUID(), topicId: undefined };
      const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
      expect(await repo.find(conversation)).toBeUndefined();
      expect((await repo.insertIfAbsent(conversation, first as string, 'u1')).threadId).toBe(first);
      expect((await repo.insertIfAbsent(conversation, second as string, 'u1')).threadId).toBe(first);
      await repo.replace(conversation, third as string, 'u1');
      expect((await repo.find(conversation))?.threadId).toBe(third);
    });

    it('keeps the agent and setup mode a conversation was pointed at, and forgets them with the next thread', async () => {
      const repo = new ThreadMapRepo(database.db);
      const conversation = { channel: 'telegram', chatId: randomUUID() };
      const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
      expect(await repo.insertIfAbsent(conversation, first, 'u1')).toEqual({ threadId: first, isBootstrapping: false });
      await repo.replace(conversation, second, 'u1', { agentName: 'support', isBootstrapping: true });
      expect(await repo.find(conversation)).toEqual({ threadId: second, agentName: 'support', isBootstrapping: true });
      await repo.replace(conversation, third, 'u1');
      expect(await repo.find(conversation)).toEqual({ threadId: third, isBootstrapping: false });
    });

    it('maps topics of one chat separately', async () => {
      const repo = new ThreadMapRepo(database.db);
      const chatId = randomUUID();
      const [a, b] = [randomUUID(), randomUUID()];
      await repo.insertIfAbsent({ channel: 'telegram', chatId, topicId: '1' }, a as string, 'u');
      await repo.insertIfAbsent({ channel: 'telegram', chatId, topicId: '2' }, b as string, 'u');
      expect((await repo.find({ channel: 'telegram', chatId, topicId: '1' }))?.threadId).toBe(a);
      expect((await repo.find({ channel: 'telegram', chatId, topicId: '2' }))?.threadId).toBe(b);
      expect(await repo.find({ channel: 'telegram', chatId })).toBeUndefined();
    });
  });
});

describe('MemoryTurnJournal', () => {
  it('forgets keys after the TTL and never holds more than its cap', async () => {
    let now = 0;
    const store = new MemoryTurnJournal({ ttlMs: 1000, maxEntries: 3, now: () => now });
    const keys = [key('1'), key('2'), key('3'), key('4')];
    for (const k of keys) expect(await store.accept(k, messageOf(k))).toBe(true);
    expect(await store.accept(key('4'), messageOf(key('4')))).toBe(false);
    expect(await store.accept(key('1'), messageOf(key('1')))).toBe(true); // evicted by the cap
    now = 2000;
    expect(await store.accept(key('4'), messageOf(key('4')))).toBe(true); // expired
  });

  it('gives back what was accepted and not finished', async () => {
    const store = new MemoryTurnJournal();
    await store.accept(key('1'), messageOf(key('1')));
    await store.accept(key('2'), messageOf(key('2')));
    await store.finish(key('1'));
    expect((await store.resumeUnfinished()).map((turn) => [turn.message.messageId, turn.resumes])).toEqual([['2', 1]]);
  });
});
