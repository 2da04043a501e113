import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, schema } from '../../../src/db/index.js';
import { ConversationListRepo, parseConversationCursor } from '../../../src/db/repos/conversation-list-repo.js';
import { RunListRepo } from '../../../src/db/repos/run-list-repo.js';
import { UsersRepo } from '../../../src/db/repos/users-repo.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

/** The console's lists on both drivers: ownership, order, ties and the cursor, raw rows read alike. */
describe.each(testDatabaseKinds())('console lists on %s', (kind) => {
  let database: DatabaseHandle;
  let conversations: ConversationListRepo;
  let runs: RunListRepo;
  let alice: string;
  let bob: string;
  const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, second));
  const thread = { aliceWeb: randomUUID(), aliceBound: randomUUID(), bobWeb: randomUUID(), strangerA: randomUUID(), strangerB: randomUUID() };

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    const { db } = database;
    const users = new UsersRepo(db);
    alice = (await users.create('alice')).user.id;
    bob = (await users.create('bob')).user.id;
    conversations = new ConversationListRepo(db);
    runs = new RunListRepo(db);
    const owned = (owner: string | undefined, provider: string, chatId: string) => ({
      ...(owner === undefined ? {} : { owner_user_id: owner }),
      channel_source: { type: 'im_channel', provider, chat_id: chatId },
    });
    await db.insert(schema.threads).values([
      { id: thread.aliceWeb, metadata: owned(alice, 'web', 'w-alice'), updatedAt: at(40) },
      { id: thread.aliceBound, metadata: owned(alice, 'telegram', '77'), updatedAt: at(30) },
      { id: thread.bobWeb, metadata: owned(bob, 'web', 'w-bob'), updatedAt: at(50) },
      // Two unbound chats active at the same instant: the thread id orders them.
      { id: thread.strangerA, metadata: owned(undefined, 'telegram', '88'), updatedAt: at(10) },
      { id: thread.strangerB, metadata: owned(undefined, 'telegram', '99'), updatedAt: at(10) },
    ]);
    const mapped = at(1);
    await db.insert(schema.threadMappings).values([
      { channel: 'web', chatId: 'w-alice', threadId: thread.aliceWeb, userId: alice, updatedAt: mapped },
      { channel: 'web', chatId: 'w-bob', threadId: thread.bobWeb, userId: bob, updatedAt: mapped },
      { channel: 'telegram', chatId: '88', threadId: thread.strangerA, userId: '88', updatedAt: mapped },
      { channel: 'telegram', chatId: '99', topicId: '5', threadId: thread.strangerB, userId: '99', updatedAt: mapped },
    ]);
    const connection = randomUUID();
    await db.insert(schema.channelConnections).values({ id: connection, ownerUserId: alice, provider: 'telegram', externalAccountId: '77' });
    await db.insert(schema.channelConversations).values({ connectionId: connection, chatId: '77', threadId: thread.aliceBound, updatedAt: mapped });
    await db.insert(schema.runs).values([
      { id: randomUUID(), threadId: thread.aliceWeb, assistantId: 'lead_agent', status: 'success', createdAt: at(20) },
      { id: randomUUID(), threadId: thread.aliceWeb, assistantId: 'lead_agent', status: 'running', createdAt: at(21), startedAt: at(21) },
      { id: randomUUID(), threadId: thread.strangerA, assistantId: 'lead_agent', status: 'error', error: 'model call failed: x', createdAt: at(22), finishedAt: at(23) },
    ]);
  });
  afterAll(async () => {
    await database?.close();
  });

  const newestFirst = () => {
    const ties = [thread.strangerA, thread.strangerB].sort().reverse();
    return [thread.bobWeb, thread.aliceWeb, thread.aliceBound, ...ties];
  };

  it('lists every conversation, newest activity first, with its person, and reads back page by page', async () => {
    const all = await conversations.list({ limit: 50 });
    expect(all.map((c) => c.threadId)).toEqual(newestFirst());
    expect(all.find((c) => c.threadId === thread.aliceBound)).toMatchObject({ platform: 'telegram', chatId: '77', ownerName: 'alice', senderId: '77', runs: 0 });
    expect(all.find((c) => c.threadId === thread.aliceWeb)).toMatchObject({ ownerName: 'alice', runs: 2, lastActivityAt: at(40).toISOString() });
    expect(all.find((c) => c.threadId === thread.strangerB)).toMatchObject({ ownerName: null, senderId: '99', topicId: '5' });
    const walked: string[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await conversations.list({ limit: 1, before: before === undefined ? undefined : parseConversationCursor(before) });
      if (page.length === 0) break;
      walked.push(...page.map((c) => c.threadId));
      before = page.at(-1)?.cursor;
    }
    expect(walked).toEqual(newestFirst());
  });

  it("gives an owner only their threads, from any cursor", async () => {
    expect((await conversations.list({ limit: 50, ownerUserId: alice })).map((c) => c.threadId)).toEqual([thread.aliceWeb, thread.aliceBound]);
    expect((await conversations.list({ limit: 50, ownerUserId: bob })).map((c) => c.threadId)).toEqual([thread.bobWeb]);
    const first = (await conversations.list({ limit: 1 }))[0];
    expect((await conversations.list({ limit: 50, ownerUserId: alice, before: parseConversationCursor(first?.cursor ?? '') })).map((c) => c.threadId)).toEqual([
      thread.aliceWeb,
      thread.aliceBound,
    ]);
    expect(await conversations.list({ limit: 50, ownerUserId: randomUUID() })).toEqual([]);
  });

  it('refuses cursors it did not write', () => {
    for (const text of ['', 'yesterday', '12_not-a-uuid', `-1_${randomUUID()}`, `1_${randomUUID()}'; drop table runs; --`]) {
      expect(parseConversationCursor(text)).toBeUndefined();
    }
  });

  it('lists runs by status, newest first, with where they ran', async () => {
    const active = await runs.list({ statuses: ['pending', 'running'], limit: 10 });
    expect(active).toHaveLength(1);
    expect(active[0]).toMatchObject({ threadId: thread.aliceWeb, status: 'running', platform: 'web', chatId: 'w-alice', finishedAt: null });
    const failed = await runs.list({ statuses: ['error', 'timeout'], limit: 10 });
    expect(failed.map((r) => [r.platform, r.chatId, r.error])).toEqual([['telegram', '88', 'model call failed: x']]);
    expect((await runs.list({ statuses: ['pending', 'running', 'success', 'error', 'timeout', 'interrupted'], limit: 2 })).map((r) => r.status)).toEqual([
      'error',
      'running',
    ]);
  });
});
