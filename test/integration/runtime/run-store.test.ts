import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoalStore } from '../../../src/agent/goals/index.js';
import { type DatabaseHandle, schema } from '../../../src/db/index.js';
import { RunStore } from '../../../src/runtime/embedded/run-store.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

describe.each(testDatabaseKinds())('RunStore.finishRunUnlessGoal on %s', (kind) => {
  let database: DatabaseHandle;
  let store: RunStore;
  let goals: GoalStore;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    store = new RunStore(database.db, 30_000);
    goals = new GoalStore(database.db);
  });
  afterAll(() => database.close());

  /** A thread with one admitted (running) run. */
  async function admitted(): Promise<{ id: string; threadId: string }> {
    const threadId = randomUUID();
    await store.createThread(threadId, {}, 'raise');
    const run = await store.admitRun({ id: randomUUID(), threadId, assistantId: 'lead_agent', metadata: {}, kwargs: {} });
    return { id: run.id, threadId };
  }

  const runRow = async (id: string) => (await database.db.select().from(schema.runs).where(eq(schema.runs.id, id)))[0];
  const threadRow = async (id: string) => (await database.db.select().from(schema.threads).where(eq(schema.threads.id, id)))[0];

  it('finishes the run and touches its thread when the thread has no goal', async () => {
    const run = await admitted();
    const before = await threadRow(run.threadId);
    const usage = { input_tokens: 3, output_tokens: 5, total_tokens: 8 };
    expect(await store.finishRunUnlessGoal(run, { status: 'success', usage })).toBe('finished');
    const row = await runRow(run.id);
    expect(row?.status).toBe('success');
    expect(row?.usage).toEqual(usage);
    expect(row?.finishedAt).toBeInstanceOf(Date);
    expect((await threadRow(run.threadId))?.updatedAt.getTime()).toBeGreaterThanOrEqual(before?.updatedAt.getTime() ?? 0);
    expect(await store.hasActiveRun(run.threadId)).toBe(false);
  });

  it('changes nothing and says so when the thread has a goal', async () => {
    const run = await admitted();
    await goals.set(run.threadId, 'all tests pass');
    const before = await threadRow(run.threadId);
    expect(await store.finishRunUnlessGoal(run, { status: 'success' })).toBe('goal');
    expect((await runRow(run.id))?.status).toBe('running');
    expect((await runRow(run.id))?.finishedAt).toBeNull();
    expect((await threadRow(run.threadId))?.updatedAt).toEqual(before?.updatedAt);
    expect(await store.finishRun(run, { status: 'success' })).toBe('finished');
    expect(await store.hasActiveRun(run.threadId)).toBe(false);
  });

  it('leaves a run another process cancelled as it was, and says so', async () => {
    const run = await admitted();
    await store.requestCancel(run.id);
    expect(await store.renewLease(run.id)).toBe('cancelled');
    expect(await store.finishRunUnlessGoal(run, { status: 'success' })).toBe('cancelled');
    expect(await store.finishRun(run, { status: 'success' })).toBe('cancelled');
    expect((await runRow(run.id))?.status).toBe('interrupted');
  });

  it('tells a run whose lease ran out and whose thread another process took that it was taken over', async () => {
    // The lease runs out at once: as for a process whose event loop stalled past it.
    const stalled = new RunStore(database.db, -1000);
    const threadId = randomUUID();
    await stalled.createThread(threadId, {}, 'raise');
    const first = await stalled.admitRun({ id: randomUUID(), threadId, assistantId: 'lead_agent', metadata: {}, kwargs: {} });
    const taker = await store.admitRun({ id: randomUUID(), threadId, assistantId: 'lead_agent', metadata: {}, kwargs: {} });
    const run = { id: first.id, threadId };
    expect(await store.renewLease(run.id)).toBe('taken-over');
    expect(await store.finishRunUnlessGoal(run, { status: 'success' })).toBe('taken-over');
    expect(await store.finishRun(run, { status: 'success' })).toBe('taken-over');
    expect((await runRow(run.id))?.status).toBe('error');
    expect(await store.activeRunId(threadId)).toBe(taker.id);
    expect(await store.renewLease(taker.id)).toBe('held');
  });

  it('renews a lapsed lease only where no other process can take the message over', async () => {
    const lapsing = new RunStore(database.db, -1000);
    const threadId = randomUUID();
    await lapsing.createThread(threadId, {}, 'raise');
    const run = await lapsing.admitRun({ id: randomUUID(), threadId, assistantId: 'lead_agent', metadata: {}, kwargs: {} });
    // Scaled out: the message is being taken over, and a run of the taker may take the thread at once.
    expect(await new RunStore(database.db, 30_000, true).renewLease(run.id)).toBe('taken-over');
    // Alone: nobody else would answer, so the run goes on.
    expect(await store.renewLease(run.id)).toBe('held');
    expect(await store.activeRunId(threadId)).toBe(run.id);
  });
});
