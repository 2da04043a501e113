import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, schema, sqlState, UNIQUE_VIOLATION } from '../../../src/db/index.js';
import { ConnectCodesRepo } from '../../../src/db/repos/connect-codes-repo.js';
import { type ChannelIdentity, ConnectionsRepo } from '../../../src/db/repos/connections-repo.js';
import { ConversationsRepo } from '../../../src/db/repos/conversations-repo.js';
import { hashSecret, UsersRepo } from '../../../src/db/repos/users-repo.js';
import { AppError, ConflictError } from '../../../src/errors.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

const TTL_MS = 600_000;

function identity(overrides: Partial<ChannelIdentity> = {}): ChannelIdentity {
  return { provider: 'telegram', externalAccountId: randomUUID(), workspaceId: '', ...overrides };
}

/** Settles every promise; returns fulfilled values and rejection reasons. */
async function settle<T>(promises: Promise<T>[]): Promise<{ values: T[]; errors: unknown[] }> {
  const results = await Promise.allSettled(promises);
  return {
    values: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    errors: results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : [])),
  };
}

describe.each(testDatabaseKinds())('account repositories on %s', (kind) => {
  let database: DatabaseHandle;
  let users: UsersRepo;
  let codes: ConnectCodesRepo;
  let connections: ConnectionsRepo;
  let conversations: ConversationsRepo;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    users = new UsersRepo(database.db);
    codes = new ConnectCodesRepo(database.db);
    connections = new ConnectionsRepo(database.db);
    conversations = new ConversationsRepo(database.db);
  });
  afterAll(() => database.close());

  async function newUserId(): Promise<string> {
    return (await users.create(`user-${randomUUID()}`)).user.id;
  }

  describe('UsersRepo', () => {
    it('creates a user whose key finds it again', async () => {
      const name = `alice-${randomUUID()}`;
      const { user, apiKey } = await users.create(name);
      expect(user.name).toBe(name);
      expect(apiKey).toMatch(/^dfc_[A-Za-z0-9_-]{43}$/);
      expect(await users.findByApiKey(apiKey)).toEqual(user);
      expect(await users.get(user.id)).toEqual(user);
      expect((await users.list()).map((u) => u.id)).toContain(user.id);
    });

    it('finds nothing for unknown keys and ids, or malformed ids', async () => {
      expect(await users.findByApiKey(`dfc_${randomUUID()}`)).toBeUndefined();
      expect(await users.get(randomUUID())).toBeUndefined();
      expect(await users.get('not-a-uuid')).toBeUndefined();
    });

    it('creates users without the shell; a grant shows on every read until it is revoked', async () => {
      const { user, apiKey } = await users.create(`dan-${randomUUID()}`);
      expect(user.canUseShell).toBe(false);
      expect(await users.setCanUseShell(user.id, true)).toMatchObject({ id: user.id, canUseShell: true });
      expect(await users.findByApiKey(apiKey)).toMatchObject({ canUseShell: true });
      expect(await users.setCanUseShell(user.id, false)).toMatchObject({ canUseShell: false });
      expect(await users.setCanUseShell(randomUUID(), true)).toBeUndefined();
      expect(await users.setCanUseShell('not-a-uuid', true)).toBeUndefined();
    });

    it('refuses a duplicate name with a 409', async () => {
      const name = `bob-${randomUUID()}`;
      await users.create(name);
      const error = await users.create(name).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConflictError);
      expect(error).toMatchObject({ status: 409, userMessage: 'A user with this name already exists.' });
    });

    it('stores only the hash of the key', async () => {
      const { user, apiKey } = await users.create(`carol-${randomUUID()}`);
      const [row] = await database.db.select().from(schema.users).where(eq(schema.users.id, user.id));
      expect(row?.apiKeyHash).toBe(hashSecret(apiKey));
      expect(JSON.stringify(row)).not.toContain(apiKey.slice(4));
    });

    it('disables and enables: every read says so, the first disabled_at is kept, unknown ids change nothing', async () => {
      const { user, apiKey } = await users.create(`eda-${randomUUID()}`);
      expect(user.isDisabled).toBe(false);
      expect(await users.setDisabled(user.id, true)).toMatchObject({ id: user.id, isDisabled: true });
      const [first] = await database.db.select().from(schema.users).where(eq(schema.users.id, user.id));
      expect(await users.setDisabled(user.id, true)).toMatchObject({ isDisabled: true });
      const [again] = await database.db.select().from(schema.users).where(eq(schema.users.id, user.id));
      expect(again?.disabledAt).toEqual(first?.disabledAt);
      expect(await users.findByApiKey(apiKey)).toMatchObject({ isDisabled: true });
      expect((await users.list()).find((u) => u.id === user.id)).toMatchObject({ isDisabled: true });
      expect(await users.setDisabled(user.id, false)).toMatchObject({ isDisabled: false });
      expect(await users.get(user.id)).toMatchObject({ isDisabled: false });
      expect(await users.setDisabled(randomUUID(), true)).toBeUndefined();
      expect(await users.setDisabled('not-a-uuid', true)).toBeUndefined();
    });

    it('rotates the key: the old one finds nobody, only the new hash is stored', async () => {
      const { user, apiKey } = await users.create(`rio-${randomUUID()}`);
      const rotated = await users.rotateKey(user.id);
      expect(rotated?.apiKey).toMatch(/^dfc_[A-Za-z0-9_-]{43}$/);
      expect(await users.findByApiKey(apiKey)).toBeUndefined();
      expect(await users.findByApiKey(rotated?.apiKey as string)).toMatchObject({ id: user.id });
      const [row] = await database.db.select().from(schema.users).where(eq(schema.users.id, user.id));
      expect(row?.apiKeyHash).toBe(hashSecret(rotated?.apiKey as string));
      expect(await users.rotateKey(randomUUID())).toBeUndefined();
    });

    it('deletes a user with their bindings and codes, records unbound and user_deleted, and is false the second time', async () => {
      const owner = await newUserId();
      const other = await newUserId();
      const mine = identity();
      const theirs = identity();
      await connections.bind({ ownerUserId: owner, identity: mine });
      await connections.bind({ ownerUserId: other, identity: theirs });
      const { code } = await codes.mint({ ownerUserId: owner, provider: 'telegram', ttlMs: TTL_MS, maxPending: 5, now: new Date() });
      const schedule = (ownerUserId: string) => ({
        id: randomUUID().slice(0, 8),
        ownerUserId,
        channel: 'telegram',
        chatId: mine.externalAccountId,
        origin: {},
        threadId: randomUUID(),
        task: 'report',
        spec: { every: 'day' },
        nextRunAt: new Date(Date.now() + 60_000),
      });
      const [hers, others] = [schedule(owner), schedule(other)];
      await database.db.insert(schema.schedules).values([hers, others]);

      expect(await users.delete(owner)).toBe(true);
      const states = await database.db.select().from(schema.schedules).where(sql`${schema.schedules.id} in (${hers.id}, ${others.id})`);
      expect(Object.fromEntries(states.map((row) => [row.ownerUserId, [row.state, row.nextRunAt]]))).toEqual({
        [owner]: ['cancelled', null],
        [other]: ['active', others.nextRunAt],
      });
      expect(await users.get(owner)).toBeUndefined();
      expect(await connections.findActive(mine)).toBeUndefined();
      expect(await connections.listForOwner(owner)).toEqual([]);
      expect(await codes.consume({ provider: 'telegram', code, now: new Date() })).toBeUndefined();
      expect(await connections.findActive(theirs)).toMatchObject({ ownerUserId: other, isOwnerDisabled: false });
      const trail = (await connections.eventPage({ limit: 50 })).filter((e) => e.userId === owner);
      expect(trail.map((e) => e.kind)).toEqual(['user_deleted', 'unbound', 'bound']);
      expect(trail[1]).toMatchObject({ provider: 'telegram', externalAccountId: mine.externalAccountId });
      expect(await users.delete(owner)).toBe(false);
      expect(await users.delete('not-a-uuid')).toBe(false);
    });

    it("reports a binding's owner as disabled to the identity gate", async () => {
      const owner = await newUserId();
      const chat = identity();
      await connections.bind({ ownerUserId: owner, identity: chat });
      await users.setDisabled(owner, true);
      expect(await connections.findActive(chat)).toMatchObject({ ownerUserId: owner, isOwnerDisabled: true });
      await users.setDisabled(owner, false);
      expect(await connections.findActive(chat)).toMatchObject({ isOwnerDisabled: false });
    });

    it('lists oldest first', async () => {
      const listed = await users.list();
      const times = listed.map((u) => u.createdAt.getTime());
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });
  });

  describe('ConnectCodesRepo', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const later = (ms: number) => new Date(now.getTime() + ms);

    it('mints a 128-bit base64url code and stores only its hash', async () => {
      const owner = await newUserId();
      const { code, expiresAt } = await codes.mint({ ownerUserId: owner, provider: 'telegram', ttlMs: TTL_MS, maxPending: 5, now });
      expect(code).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(code, 'base64url')).toHaveLength(16);
      expect(expiresAt).toEqual(later(TTL_MS));
      const rows = await database.db
        .select()
        .from(schema.channelConnectCodes)
        .where(eq(schema.channelConnectCodes.ownerUserId, owner));
      expect(rows).toHaveLength(1);
      expect(rows[0]?.codeHash).toBe(hashSecret(code));
      expect(JSON.stringify(rows)).not.toContain(code);
    });

    it('consumes a code once, for its provider, before it expires', async () => {
      const owner = await newUserId();
      const mint = () => codes.mint({ ownerUserId: owner, provider: 'telegram', ttlMs: TTL_MS, maxPending: 5, now });
      const { code } = await mint();
      expect(await codes.consume({ provider: 'slack', code, now })).toBeUndefined();
      expect(await codes.consume({ provider: 'telegram', code, now: later(1000) })).toBe(owner);
      expect(await codes.consume({ provider: 'telegram', code, now: later(2000) })).toBeUndefined();

      const expiring = await mint();
      expect(await codes.consume({ provider: 'telegram', code: expiring.code, now: later(TTL_MS) })).toBeUndefined();
      expect(await codes.consume({ provider: 'telegram', code: 'unknown-code', now })).toBeUndefined();
    });

    it('gives a code to exactly one of 10 concurrent consumers', async () => {
      const owner = await newUserId();
      const { code } = await codes.mint({ ownerUserId: owner, provider: 'telegram', ttlMs: TTL_MS, maxPending: 5, now });
      const results = await Promise.all(Array.from({ length: 10 }, () => codes.consume({ provider: 'telegram', code, now })));
      expect(results.filter((r) => r !== undefined)).toEqual([owner]);
    });

    it('lets exactly maxPending of 10 concurrent mints through; the rest get 429', async () => {
      const owner = await newUserId();
      const { values, errors } = await settle(
        Array.from({ length: 10 }, () => codes.mint({ ownerUserId: owner, provider: 'telegram', ttlMs: TTL_MS, maxPending: 5, now })),
      );
      expect(values).toHaveLength(5);
      expect(errors).toHaveLength(5);
      for (const error of errors) {
        expect(error).toBeInstanceOf(AppError);
        expect(error).toMatchObject({
          code: 'TOO_MANY_PENDING_CODES',
          status: 429,
          userMessage: 'Too many pending channel connection codes. Wait for existing codes to expire or use one of them.',
        });
      }
      // Another provider and another owner have caps of their own.
      await codes.mint({ ownerUserId: owner, provider: 'slack', ttlMs: TTL_MS, maxPending: 5, now });
      await codes.mint({ ownerUserId: await newUserId(), provider: 'telegram', ttlMs: TTL_MS, maxPending: 5, now });
    });

    it('does not count expired or consumed codes toward the cap, and deletes expired ones', async () => {
      const owner = await newUserId();
      const mint = (at: Date) => codes.mint({ ownerUserId: owner, provider: 'telegram', ttlMs: TTL_MS, maxPending: 2, now: at });
      await mint(now);
      const consumed = await mint(now);
      await expect(mint(now)).rejects.toMatchObject({ status: 429 });
      expect(await codes.consume({ provider: 'telegram', code: consumed.code, now })).toBe(owner);
      await mint(now);
      await expect(mint(now)).rejects.toMatchObject({ status: 429 });

      // At expiry of the first batch, both pending codes are gone and two new ones fit.
      await mint(later(TTL_MS));
      await mint(later(TTL_MS));
      const rows = await database.db
        .select()
        .from(schema.channelConnectCodes)
        .where(eq(schema.channelConnectCodes.ownerUserId, owner));
      expect(rows).toHaveLength(2);
    });
  });

  describe('ConnectionsRepo', () => {
    it('binds: a connected row and a bound event', async () => {
      const owner = await newUserId();
      const id = identity({ workspaceId: 'team-1' });
      const { connection, previousOwnerIds } = await connections.bind({
        ownerUserId: owner,
        identity: id,
        externalAccountName: 'alice',
        workspaceName: 'Team',
        metadata: { chat: 'private' },
      });
      expect(previousOwnerIds).toEqual([]);
      expect(connection).toMatchObject({
        ownerUserId: owner,
        status: 'connected',
        ...id,
        externalAccountName: 'alice',
        workspaceName: 'Team',
        metadata: { chat: 'private' },
      });
      expect(await connections.findActive(id)).toEqual({ ...connection, ownerCanUseShell: false, isOwnerDisabled: false });
      const events = await connections.events({ externalAccountId: id.externalAccountId }, 10);
      expect(events).toMatchObject([{ kind: 'bound', ...id, userId: owner, connectionId: connection.id }]);
    });

    it('rebinding the same owner reuses the row, even a revoked one', async () => {
      const owner = await newUserId();
      const id = identity();
      const first = await connections.bind({ ownerUserId: owner, identity: id, externalAccountName: 'old' });
      const second = await connections.bind({ ownerUserId: owner, identity: id, externalAccountName: 'new', metadata: { a: 1 } });
      expect(second.connection.id).toBe(first.connection.id);
      expect(second.connection).toMatchObject({ externalAccountName: 'new', metadata: { a: 1 } });
      expect(second.previousOwnerIds).toEqual([]);

      expect(await connections.disconnect(first.connection.id, owner)).toBe(true);
      const third = await connections.bind({ ownerUserId: owner, identity: id });
      expect(third.connection).toMatchObject({ id: first.connection.id, status: 'connected', externalAccountName: null });
      expect(await connections.listForOwner(owner)).toHaveLength(1);
    });

    it('a second owner binding the identity takes it over', async () => {
      const [alice, bob] = [await newUserId(), await newUserId()];
      const id = identity();
      const first = await connections.bind({ ownerUserId: alice, identity: id });
      const second = await connections.bind({ ownerUserId: bob, identity: id });
      expect(second.previousOwnerIds).toEqual([alice]);
      expect(second.connection.id).not.toBe(first.connection.id);
      expect(await connections.findActive(id)).toMatchObject({ id: second.connection.id, ownerUserId: bob });
      expect(await connections.listForOwner(alice)).toMatchObject([{ id: first.connection.id, status: 'revoked' }]);

      const events = await connections.events({ provider: id.provider, externalAccountId: id.externalAccountId }, 10);
      expect(events.map((e) => [e.kind, e.userId, e.connectionId])).toEqual([
        ['bound', bob, second.connection.id],
        ['taken_over', alice, first.connection.id],
        ['bound', alice, first.connection.id],
      ]);
    });

    it('the database refuses two active owners of one identity, but allows revoked ones', async () => {
      const [alice, bob, carol] = [await newUserId(), await newUserId(), await newUserId()];
      const id = identity();
      const row = (ownerUserId: string, status: 'connected' | 'revoked') => ({ id: randomUUID(), ownerUserId, ...id, status });
      await database.db.insert(schema.channelConnections).values(row(alice, 'connected'));
      await database.db.insert(schema.channelConnections).values(row(bob, 'revoked'));
      const error = await database.db
        .insert(schema.channelConnections)
        .values(row(carol, 'connected'))
        .catch((e: unknown) => e);
      expect(sqlState(error)).toBe(UNIQUE_VIOLATION);
    });

    it('concurrent binds of one identity by two owners leave exactly one connected row', async () => {
      for (let round = 0; round < 5; round++) {
        const owners = [await newUserId(), await newUserId()];
        const id = identity();
        const results = await Promise.all(owners.map((ownerUserId) => connections.bind({ ownerUserId, identity: id })));
        const rows = await database.db
          .select()
          .from(schema.channelConnections)
          .where(eq(schema.channelConnections.externalAccountId, id.externalAccountId));
        expect(rows).toHaveLength(2);
        const connected = rows.filter((r) => r.status === 'connected');
        expect(connected).toHaveLength(1);
        expect(results.map((r) => r.connection.id)).toContain(connected[0]?.id);
        expect((await connections.findActive(id))?.id).toBe(connected[0]?.id);
      }
    });

    it('findActive ignores revoked rows and other workspaces', async () => {
      const owner = await newUserId();
      const id = identity({ workspaceId: 'w1' });
      const { connection } = await connections.bind({ ownerUserId: owner, identity: id });
      expect(await connections.findActive({ ...id, workspaceId: 'w2' })).toBeUndefined();
      expect(await connections.findActive({ ...id, provider: 'slack' })).toBeUndefined();
      await connections.disconnect(connection.id, owner);
      expect(await connections.findActive(id)).toBeUndefined();
    });

    it('disconnect is owner-only and false for unknown, malformed or revoked ids', async () => {
      const [alice, bob] = [await newUserId(), await newUserId()];
      const id = identity();
      const { connection } = await connections.bind({ ownerUserId: alice, identity: id });
      expect(await connections.disconnect(connection.id, bob)).toBe(false);
      expect(await connections.disconnect(randomUUID(), alice)).toBe(false);
      expect(await connections.disconnect('not-a-uuid', alice)).toBe(false);
      expect(await connections.findActive(id)).toMatchObject({ id: connection.id });
      expect(await connections.disconnect(connection.id, alice)).toBe(true);
      expect(await connections.disconnect(connection.id, alice)).toBe(false);
      const events = await connections.events({ externalAccountId: id.externalAccountId }, 10);
      expect(events.map((e) => [e.kind, e.userId])).toEqual([
        ['unbound', alice],
        ['bound', alice],
      ]);
    });

    it('lists an owner’s rows of every status, newest first', async () => {
      const owner = await newUserId();
      const a = await connections.bind({ ownerUserId: owner, identity: identity() });
      const b = await connections.bind({ ownerUserId: owner, identity: identity({ provider: 'slack' }) });
      // PGlite's now() counts whole milliseconds: the disconnect must come in a later one to be newer.
      await clockPast(b.connection.updatedAt.getTime());
      await connections.disconnect(a.connection.id, owner);
      const listed = await connections.listForOwner(owner);
      expect(listed.map((c) => [c.id, c.status])).toEqual([
        [a.connection.id, 'revoked'],
        [b.connection.id, 'connected'],
      ]);
      expect(await connections.listForOwner(await newUserId())).toEqual([]);
    });

    it('counts rejected codes by sender and by provider within the time window; refusals unread are not counted', async () => {
      const sender = identity({ workspaceId: 'w1' });
      const before = new Date(Date.now() - 60_000);
      const count = (since: Date) => connections.countRejectedCodes({ provider: 'telegram', externalAccountId: sender.externalAccountId, since });
      const { provider: earlier } = await count(before);
      await connections.recordRejectedCode(sender);
      await connections.recordRejectedCode({ ...sender, workspaceId: 'w2' });
      await connections.recordRejectedCode({ ...sender, provider: 'slack' });
      await connections.recordRejectedCode(identity());
      await connections.recordRejectedCode(sender, 'code_refused_account_limit');
      await connections.recordRejectedCode(identity(), 'code_refused_provider_limit');
      expect(await count(before)).toEqual({ account: 2, provider: earlier + 3 });

      // Age one attempt past the window.
      await database.db.execute(
        sql`update channel_connection_events set created_at = now() - interval '1 hour'
            where external_account_id = ${sender.externalAccountId} and workspace_id = 'w2'`,
      );
      expect(await count(before)).toEqual({ account: 1, provider: earlier + 2 });
      expect(await count(new Date(Date.now() + 60_000))).toEqual({ account: 0, provider: 0 });

      const events = await connections.events({ provider: 'telegram', externalAccountId: sender.externalAccountId }, 10);
      expect(events.map((e) => e.kind)).toEqual(['code_refused_account_limit', 'code_rejected', 'code_rejected']);
      expect(events.every((e) => e.userId === null && e.connectionId === null)).toBe(true);
    });

    it('pages the whole audit trail newest first by its insertion order', async () => {
      const sender = identity();
      for (let i = 0; i < 5; i++) await connections.recordRejectedCode({ ...sender, workspaceId: `page-${i}` });
      const first = await connections.eventPage({ limit: 3 });
      const second = await connections.eventPage({ limit: 3, beforeSeq: first.at(-1)?.seq as number });
      expect(first.map((e) => e.workspaceId)).toEqual(['page-4', 'page-3', 'page-2']);
      expect(second.slice(0, 2).map((e) => e.workspaceId)).toEqual(['page-1', 'page-0']);
      const seqs = [...first, ...second].map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    });
  });

  describe('ConversationsRepo', () => {
    async function newConnectionId(): Promise<string> {
      return (await connections.bind({ ownerUserId: await newUserId(), identity: identity() })).connection.id;
    }

    it('keeps the first thread of a conversation and lets /new replace it', async () => {
      const key = { connectionId: await newConnectionId(), chatId: 'chat-1' };
      const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
      expect(await conversations.find(key)).toBeUndefined();
      expect((await conversations.insertIfAbsent(key, first)).threadId).toBe(first);
      expect((await conversations.insertIfAbsent(key, second)).threadId).toBe(first);
      await conversations.replace(key, third);
      expect((await conversations.find(key))?.threadId).toBe(third);
    });

    it('one winner among concurrent first messages', async () => {
      const key = { connectionId: await newConnectionId(), chatId: 'chat-1', topicId: '7' };
      const candidates = Array.from({ length: 8 }, () => randomUUID());
      const winners = (await Promise.all(candidates.map((threadId) => conversations.insertIfAbsent(key, threadId)))).map((won) => won.threadId);
      expect(new Set(winners).size).toBe(1);
      expect(candidates).toContain(winners[0]);
      expect((await conversations.find(key))?.threadId).toBe(winners[0]);
    });

    it('separates topics, chats and connections', async () => {
      const [c1, c2] = [await newConnectionId(), await newConnectionId()];
      const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
      await conversations.insertIfAbsent({ connectionId: c1, chatId: 'g', topicId: '1' }, a);
      await conversations.insertIfAbsent({ connectionId: c1, chatId: 'g' }, b);
      await conversations.insertIfAbsent({ connectionId: c2, chatId: 'g' }, c);
      expect((await conversations.find({ connectionId: c1, chatId: 'g', topicId: '1' }))?.threadId).toBe(a);
      expect((await conversations.find({ connectionId: c1, chatId: 'g', topicId: '' }))?.threadId).toBe(b);
      expect((await conversations.find({ connectionId: c2, chatId: 'g' }))?.threadId).toBe(c);
      expect(await conversations.find({ connectionId: c2, chatId: 'h' })).toBeUndefined();
    });
  });
});

/** Resolves once the clock has passed `ms` (checked between event-loop turns, not slept). */
async function clockPast(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((resolve) => setImmediate(resolve));
}
