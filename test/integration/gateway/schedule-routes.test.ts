import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { SchedulesRepo } from '../../../src/db/repos/schedules-repo.js';
import { UsersRepo } from '../../../src/db/repos/users-repo.js';
import { buildApp } from '../../../src/gateway/app.js';
import { createAuthenticator } from '../../../src/gateway/auth.js';
import { silentLogger } from '../../../src/logger.js';
import { ScheduleBook } from '../../../src/schedules/book.js';
import { schedulesConfigSchema } from '../../../src/schedules/config.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';
import { healthyReport } from '../../unit/gateway/stub-runtime.js';

/**
 * `/api/schedules` with accounts on: each person sees and changes only their own schedules
 * (another's is a 404, as if it did not exist), the operator every schedule without its words.
 */

const ADMIN_TOKEN = 'schedule-routes-admin-token';
const NOW = Date.parse('2026-12-04T10:00:00.000Z');

describe.each(testDatabaseKinds())('schedule routes on %s', (kind) => {
  let database: DatabaseHandle;
  let app: FastifyInstance;
  let book: ScheduleBook;
  let alice: { id: string; key: string };
  let bob: { id: string; key: string };

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    const users = new UsersRepo(database.db);
    const make = async (name: string) => {
      const { user, apiKey } = await users.create(`${name}-${randomUUID().slice(0, 6)}`);
      return { id: user.id, key: apiKey };
    };
    [alice, bob] = [await make('alice'), await make('bob')];
    book = new ScheduleBook({
      repo: new SchedulesRepo(database.db),
      runtime: { createThread: async () => ({ thread_id: randomUUID() }) as never },
      config: schedulesConfigSchema.parse({ timezone: 'UTC' }),
      now: () => NOW,
    });
    app = await buildApp({
      runtime: {} as never,
      health: async () => healthyReport,
      logger: silentLogger(),
      schedules: book,
      auth: { authenticator: createAuthenticator({ adminToken: ADMIN_TOKEN, users }), isPrincipalRequired: true },
    });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  async function scheduleOf(owner: { id: string }, text: string): Promise<string> {
    const made = await book.create({ ownerUserId: owner.id, origin: { channel: 'telegram', chatId: '42', userId: '42', workspaceId: '42', isPrivateChat: true }, text });
    if (!made.ok) throw new Error(`not made: ${JSON.stringify(made)}`);
    return made.schedule.id;
  }

  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, key: string, payload?: Record<string, unknown>) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(payload === undefined ? {} : { payload }) });

  it("lists a person's own schedules with their words, and never another's", async () => {
    const mine = await scheduleOf(alice, 'every weekday 09:00 summarise the open PRs');
    const theirs = await scheduleOf(bob, 'every day 18:00 post the burn-down chart');
    const listed = (await call('GET', '/api/schedules', alice.key)).json().schedules as Array<Record<string, unknown>>;
    expect(listed.map((schedule) => schedule.id)).toContain(mine);
    expect(listed.map((schedule) => schedule.id)).not.toContain(theirs);
    expect(listed.find((schedule) => schedule.id === mine)).toMatchObject({
      owner_user_id: alice.id,
      channel: 'telegram',
      chat_id: '42',
      task: 'summarise the open PRs',
      when: 'every weekday at 09:00',
      timezone: 'UTC',
      missed: 'run_once',
      state: 'active',
      next_run_at: '2026-12-07T09:00:00.000Z',
    });
  });

  it("answers 404 for another person's schedule on every route, and changes nothing", async () => {
    const theirs = await scheduleOf(bob, 'every day 18:00 water the plants');
    for (const [method, url, payload] of [
      ['GET', `/api/schedules/${theirs}`],
      ['POST', `/api/schedules/${theirs}/pause`],
      ['POST', `/api/schedules/${theirs}/resume`],
      ['PATCH', `/api/schedules/${theirs}`, { missed: 'skip' }],
      ['DELETE', `/api/schedules/${theirs}`],
    ] as const) {
      expect((await call(method, url, alice.key, payload)).statusCode).toBe(404);
    }
    expect((await call('GET', `/api/schedules/${theirs}`, bob.key)).json().schedule).toMatchObject({ state: 'active', missed: 'run_once' });
  });

  it('pauses, resumes, sets the missed policy and cancels for the owner', async () => {
    const id = await scheduleOf(alice, 'every 2h check the deploy');
    expect((await call('POST', `/api/schedules/${id}/pause`, alice.key)).json().schedule).toMatchObject({ state: 'paused', next_run_at: null });
    expect((await call('POST', `/api/schedules/${id}/resume`, alice.key)).json().schedule).toMatchObject({ state: 'active', next_run_at: '2026-12-04T12:00:00.000Z' });
    expect((await call('PATCH', `/api/schedules/${id}`, alice.key, { missed: 'skip' })).json().schedule.missed).toBe('skip');
    expect((await call('PATCH', `/api/schedules/${id}`, alice.key, { missed: 'sometimes' })).statusCode).toBe(400);
    expect((await call('DELETE', `/api/schedules/${id}`, alice.key)).json().schedule.state).toBe('cancelled');
    expect((await call('GET', '/api/schedules', alice.key)).json().schedules.map((s: { id: string }) => s.id)).not.toContain(id);
  });

  it("shows the operator every schedule without its words, and lets them stop any", async () => {
    const theirs = await scheduleOf(bob, 'every day 07:00 read my private notes');
    const listed = (await call('GET', '/api/schedules', ADMIN_TOKEN)).json().schedules as Array<Record<string, unknown>>;
    const seen = listed.find((schedule) => schedule.id === theirs);
    expect(seen).toMatchObject({ owner_user_id: bob.id, task_chars: 'read my private notes'.length });
    expect(seen).not.toHaveProperty('task');
    expect(JSON.stringify(listed)).not.toContain('private notes');
    expect((await call('DELETE', `/api/schedules/${theirs}`, ADMIN_TOKEN)).json().schedule.state).toBe('cancelled');
  });

  it('refuses an id that is not one, and answers 401 without a key', async () => {
    expect((await call('GET', '/api/schedules/..%2F..%2Fetc', alice.key)).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/api/schedules' })).statusCode).toBe(401);
  });
});
