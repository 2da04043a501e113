import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { ConnectionsRepo } from '../../../src/db/repos/connections-repo.js';
import { ConversationsRepo } from '../../../src/db/repos/conversations-repo.js';
import { ThreadMapRepo } from '../../../src/db/repos/thread-map-repo.js';
import { UsersRepo } from '../../../src/db/repos/users-repo.js';
import { silentLogger } from '../../../src/logger.js';
import { ThreadResolver } from '../../../src/manager/threads.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime } from '../../../src/runtime/types.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));

describe.each(testDatabaseKinds())('threads of bound people on %s', (kind) => {
  let database: DatabaseHandle;
  let runtime: AgentRuntime;
  let threads: ThreadResolver;
  let connectionOf: Record<string, string>;

  const message = (userId: string, connectionId?: string): InboundMessage => ({
    channel: 'telegram',
    chatId: '-500',
    topicId: 'topic-1',
    userId,
    text: 'hi',
    kind: 'chat',
    isPrivateChat: false,
    replyTo: {},
    receivedAt: 0,
    ...(connectionId === undefined ? {} : { connectionId, ownerUserId: 'owner' }),
  });

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    runtime = await createEmbeddedRuntime({ db: database.db, models: [], agentsDir: AGENTS_DIR, logger: silentLogger() });
    threads = new ThreadResolver(new ThreadMapRepo(database.db), runtime, { conversations: new ConversationsRepo(database.db) });
    const users = new UsersRepo(database.db);
    const connections = new ConnectionsRepo(database.db);
    connectionOf = {};
    for (const name of ['ana', 'ben']) {
      const { user } = await users.create(name);
      const { connection } = await connections.bind({
        ownerUserId: user.id,
        identity: { provider: 'telegram', externalAccountId: name, workspaceId: '-500' },
      });
      connectionOf[name] = connection.id;
    }
  });
  afterAll(async () => {
    await runtime.close();
    await database.close();
  });

  it('gives two bound people in one group conversation separate threads, and keeps each one', async () => {
    const ana = await threads.resolve(message('ana', connectionOf.ana));
    const ben = await threads.resolve(message('ben', connectionOf.ben));
    expect(ana).not.toBe(ben);
    expect(await threads.resolve(message('ana', connectionOf.ana))).toBe(ana);
    // An unbound sender in the same conversation uses the chat's own thread.
    const unbound = await threads.resolve(message('cid'));
    expect([ana, ben]).not.toContain(unbound);
    // /new for ana moves only ana.
    const fresh = await threads.startNew(message('ana', connectionOf.ana));
    expect(await threads.find(message('ana', connectionOf.ana))).toBe(fresh);
    expect(await threads.find(message('ben', connectionOf.ben))).toBe(ben);
  });

  it('uses a preferred thread id, and two resolvers (two processes) agree on it', async () => {
    const preferredThreadId = '6f1c1a52-0b8e-5d7a-9a43-2b1e3c4d5e6f';
    const event = { ...message('github'), chatId: 'octo/repo', topicId: '7:triage', preferredThreadId };
    const other = new ThreadResolver(new ThreadMapRepo(database.db), runtime, { conversations: new ConversationsRepo(database.db) });
    const [first, second] = await Promise.all([threads.resolve(event), other.resolve(event)]);
    expect([first, second]).toEqual([preferredThreadId, preferredThreadId]);
  });

  it('keeps what it read only as the sole process: its own /new shows at once, a change by another process only without the cache', async () => {
    const repos = { conversations: new ConversationsRepo(database.db) };
    const sole = new ThreadResolver(new ThreadMapRepo(database.db), runtime, { ...repos, isSoleProcess: true });
    const shared = new ThreadResolver(new ThreadMapRepo(database.db), runtime, repos);
    const anaInGroup = { ...message('ana', connectionOf.ana), chatId: '-600' };
    const first = await sole.resolve(anaInGroup);
    expect(await sole.resolve(anaInGroup)).toBe(first);
    // Its own /new: the next message goes to the new thread, never the one it had kept.
    const fresh = await sole.startNew(anaInGroup);
    expect(fresh).not.toBe(first);
    expect(await sole.resolve(anaInGroup)).toBe(fresh);
    // The same change made by another resolver (another process): only the uncached one sees it.
    const elsewhere = await shared.startNew(anaInGroup);
    expect(await shared.resolve(anaInGroup)).toBe(elsewhere);
    expect(await sole.resolve(anaInGroup)).toBe(fresh);
  });
});
