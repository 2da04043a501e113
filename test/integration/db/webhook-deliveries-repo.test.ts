import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryClaim } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { WebhookDeliveriesRepo } from '../../../src/db/repos/webhook-deliveries-repo.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

/** Rows of a raw `execute`: postgres-js returns an array, PGlite an object with `rows`. */
function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

const NEW: DeliveryClaim = { kind: 'new' };
const IN_PROGRESS: DeliveryClaim = { kind: 'in_progress' };

describe.each(testDatabaseKinds())('WebhookDeliveriesRepo on %s', (kind) => {
  let database: DatabaseHandle;
  let repo: WebhookDeliveriesRepo;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
    repo = new WebhookDeliveriesRepo(database.db);
  });
  afterAll(() => database.close());

  /** Rewrites one delivery's timestamps, as if it had been received or touched long ago. */
  async function backdate(platform: string, deliveryId: string, set: SQL): Promise<void> {
    await database.db.execute(sql`update webhook_deliveries set ${set} where platform = ${platform} and delivery_id = ${deliveryId}`);
  }

  async function exists(platform: string, deliveryId: string): Promise<boolean> {
    const result = await database.db.execute(sql`select 1 as one from webhook_deliveries where platform = ${platform} and delivery_id = ${deliveryId}`);
    return rowsOf(result).length === 1;
  }

  it('answers a finished delivery with its stored summary, and never runs it again', async () => {
    const github = repo.forPlatform('github');
    const id = randomUUID();
    const summary = { matched_agents: ['reviewer'], fired_agents: [], skipped: [{ agent: 'x', reason: 'no_target' }], note: 'ünïcödé ✓' };
    expect(await github.begin(id, 'issues')).toEqual(NEW);
    await github.finish(id, summary);
    expect(await github.begin(id, 'issues')).toEqual({ kind: 'done', summary });
    expect(await github.begin(id, 'issues')).toEqual({ kind: 'done', summary });
    // Stored as a jsonb object, not as a string holding JSON.
    const result = await database.db.execute(sql`select jsonb_typeof(summary) as type from webhook_deliveries where platform = 'github' and delivery_id = ${id}`);
    expect(rowsOf(result)).toEqual([{ type: 'object' }]);
  });

  it('runs a failed delivery again, once', async () => {
    const github = repo.forPlatform('github');
    const id = randomUUID();
    expect(await github.begin(id, 'issue_comment')).toEqual(NEW);
    await github.fail(id);
    expect(await github.begin(id, 'issue_comment')).toEqual(NEW);
    // The redelivery holds it now.
    expect(await github.begin(id, 'issue_comment')).toEqual(IN_PROGRESS);
    await github.finish(id, { ok: true });
    expect(await github.begin(id, 'issue_comment')).toEqual({ kind: 'done', summary: { ok: true } });
  });

  it('reports a delivery being processed as in progress', async () => {
    const id = randomUUID();
    expect(await repo.begin('github', id, 'pull_request')).toEqual(NEW);
    expect(await repo.begin('github', id, 'pull_request')).toEqual(IN_PROGRESS);
  });

  it('takes over a delivery stuck in processing for longer than staleAfterMs', async () => {
    const quick = new WebhookDeliveriesRepo(database.db, 1);
    const id = randomUUID();
    expect(await quick.begin('github', id, 'issues')).toEqual(NEW);
    // Waiting for the database clock to move past 1 ms; nothing runs in the background.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await quick.begin('github', id, 'issues')).toEqual(NEW);
  });

  it('measures staleAfterMs in milliseconds, from the last update', async () => {
    const minute = new WebhookDeliveriesRepo(database.db, 60_000);
    const id = randomUUID();
    expect(await minute.begin('github', id, 'issues')).toEqual(NEW);
    await backdate('github', id, sql`updated_at = now() - interval '50 seconds', received_at = now() - interval '1 hour'`);
    expect(await minute.begin('github', id, 'issues')).toEqual(IN_PROGRESS);
    await backdate('github', id, sql`updated_at = now() - interval '70 seconds'`);
    expect(await minute.begin('github', id, 'issues')).toEqual(NEW);
    // Taking it over counts as an update: it is fresh again.
    expect(await minute.begin('github', id, 'issues')).toEqual(IN_PROGRESS);
  });

  it('takes over a claim stuck for longer than the staleAfterMs of this begin', async () => {
    const chat = repo.forPlatform('dingtalk');
    const id = randomUUID();
    expect(await chat.begin(id, 'message', { staleAfterMs: 60_000 })).toEqual(NEW);
    await backdate('dingtalk', id, sql`updated_at = now() - interval '50 seconds'`);
    expect(await chat.begin(id, 'message', { staleAfterMs: 60_000 })).toEqual(IN_PROGRESS);
    await backdate('dingtalk', id, sql`updated_at = now() - interval '70 seconds'`);
    // The repo's own default (ten minutes) would still call it in progress.
    expect(await repo.begin('dingtalk', id, 'message')).toEqual(IN_PROGRESS);
    expect(await chat.begin(id, 'message', { staleAfterMs: 60_000 })).toEqual(NEW);
  });

  it('releases every claim a crash left processing, and nothing settled', async () => {
    const [stuck, done] = [randomUUID(), randomUUID()];
    const slack = repo.forPlatform('slack');
    expect(await slack.begin(stuck, 'message')).toEqual(NEW);
    expect(await slack.begin(done, 'message')).toEqual(NEW);
    await slack.finish(done, {});
    expect(await repo.releaseAbandoned()).toBeGreaterThanOrEqual(1);
    expect(await slack.begin(stuck, 'message')).toEqual(NEW);
    expect(await slack.begin(done, 'message')).toEqual({ kind: 'done', summary: {} });
  });

  it('keeps the same delivery id of two platforms apart', async () => {
    const id = randomUUID();
    const [github, gitlab] = [repo.forPlatform('github'), repo.forPlatform('gitlab')];
    expect(await github.begin(id, 'push')).toEqual(NEW);
    expect(await gitlab.begin(id, 'push')).toEqual(NEW);
    await github.finish(id, { from: 'github' });
    expect(await gitlab.begin(id, 'push')).toEqual(IN_PROGRESS);
    await gitlab.fail(id);
    expect(await github.begin(id, 'push')).toEqual({ kind: 'done', summary: { from: 'github' } });
    expect(await gitlab.begin(id, 'push')).toEqual(NEW);
  });

  describe('concurrent begins of one delivery', () => {
    beforeAll(async () => {
      // Open the pool's connections first: a connection still being opened serializes the race.
      await Promise.all(Array.from({ length: 4 }, () => database.ping()));
    });

    it('give exactly one of them `new`', async () => {
      for (let round = 0; round < 3; round++) {
        const id = randomUUID();
        const claims = await Promise.all(Array.from({ length: 10 }, () => repo.begin('github', id, 'issues')));
        expect(claims.filter((claim) => claim.kind === 'new')).toHaveLength(1);
        expect(claims.filter((claim) => claim.kind === 'in_progress')).toHaveLength(9);
      }
    });

    it('let exactly one of them take over a stuck delivery', async () => {
      for (let round = 0; round < 3; round++) {
        const id = randomUUID();
        expect(await repo.begin('github', id, 'issues')).toEqual(NEW);
        await backdate('github', id, sql`updated_at = now() - interval '1 day'`);
        const claims = await Promise.all(Array.from({ length: 10 }, () => repo.begin('github', id, 'issues')));
        expect(claims.filter((claim) => claim.kind === 'new')).toHaveLength(1);
      }
    });
  });

  it('prunes old settled deliveries, keeping fresh ones and old ones still processing', async () => {
    // Other tests' rows were received just now; only these are from 2001, so counts are exact.
    const platform = `prune-${randomUUID()}`;
    const ids = { oldDone: 'old-done', oldFailed: 'old-failed', oldStuck: 'old-stuck', oldRunning: 'old-running', freshDone: 'fresh-done' };
    for (const id of Object.values(ids)) expect(await repo.begin(platform, id, 'issues')).toEqual(NEW);
    await repo.finish(platform, ids.oldDone, {});
    await repo.fail(platform, ids.oldFailed);
    await repo.finish(platform, ids.freshDone, {});
    for (const id of [ids.oldDone, ids.oldFailed, ids.oldStuck, ids.oldRunning]) {
      await backdate(platform, id, sql`received_at = timestamptz '2001-01-01T00:00:00Z'`);
    }
    // Still processing, but long enough ago to count as a dead process's leftover.
    await backdate(platform, ids.oldStuck, sql`updated_at = timestamptz '2001-01-01T00:00:00Z'`);

    expect(await repo.prune(new Date('2001-06-01T00:00:00Z'))).toBe(3);
    expect(await exists(platform, ids.oldDone)).toBe(false);
    expect(await exists(platform, ids.oldFailed)).toBe(false);
    expect(await exists(platform, ids.oldStuck)).toBe(false);
    expect(await exists(platform, ids.oldRunning)).toBe(true);
    expect(await exists(platform, ids.freshDone)).toBe(true);
    expect(await repo.begin(platform, ids.oldRunning, 'issues')).toEqual(IN_PROGRESS);
    expect(await repo.prune(new Date('2001-06-01T00:00:00Z'))).toBe(0);
  });
});
