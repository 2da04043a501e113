import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GoalStore } from '../../../src/agent/goals/index.js';
import { MemoryStore } from '../../../src/agent/memory/index.js';
import { SkillRegistry } from '../../../src/agent/skills/index.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { buildApp } from '../../../src/gateway/app.js';
import { silentLogger } from '../../../src/logger.js';
import { createEmbeddedRuntime } from '../../../src/runtime/embedded/index.js';
import type { AgentRuntime } from '../../../src/runtime/types.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';
import { healthyReport } from '../../unit/gateway/stub-runtime.js';

const AGENTS_DIR = fileURLToPath(new URL('../../../agents', import.meta.url));

describe.each(testDatabaseKinds())('goal, memory and skill routes on %s', (kind) => {
  let database: DatabaseHandle;
  let runtime: AgentRuntime;
  let app: FastifyInstance;
  let skillsDir: string;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    skillsDir = await mkdtemp(join(tmpdir(), 'dfc-skill-routes-'));
    await mkdir(join(skillsDir, 'public', 'summarise'), { recursive: true });
    await writeFile(join(skillsDir, 'public', 'summarise', 'SKILL.md'), '---\nname: summarise\ndescription: Summarise a document.\nlicense: MIT\n---\nBe brief.\n');
    runtime = await createEmbeddedRuntime({
      db: database.db,
      models: [],
      agentsDir: AGENTS_DIR,
      logger: silentLogger(),
      goals: { store: new GoalStore(database.db), config: { enabled: true, max_continuations: 8 } },
    });
    const skills = await SkillRegistry.load({ skillsDir, db: database.db, logger: silentLogger() });
    app = await buildApp({ runtime, health: async () => healthyReport, logger: silentLogger(), skills });
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
    await database.close();
    await rm(skillsDir, { recursive: true, force: true });
  });

  describe('/api/threads/:id/goal', () => {
    it('sets, shows and clears a goal, normalising whitespace', async () => {
      const { thread_id } = await runtime.createThread();
      const url = `/api/threads/${thread_id}/goal`;
      expect((await app.inject({ method: 'GET', url })).json()).toEqual({ goal: null });
      const put = await app.inject({ method: 'PUT', url, payload: { objective: '  ship   the\nrelease ', max_continuations: 3 } });
      expect(put.statusCode).toBe(200);
      expect(put.json().goal).toMatchObject({ objective: 'ship the release', max_continuations: 3, last_evaluation: null });
      expect((await app.inject({ method: 'GET', url })).json().goal.objective).toBe('ship the release');
      expect((await app.inject({ method: 'DELETE', url })).json()).toEqual({ goal: null });
      expect((await app.inject({ method: 'GET', url })).json()).toEqual({ goal: null });
    });

    it('answers 422 for more than 8 continuations or an objective over 4000 characters, 404 for an unknown thread, 400 for a bad body', async () => {
      const { thread_id } = await runtime.createThread();
      const url = `/api/threads/${thread_id}/goal`;
      const tooMany = await app.inject({ method: 'PUT', url, payload: { objective: 'x', max_continuations: 9 } });
      expect(tooMany.statusCode).toBe(422);
      const tooLong = await app.inject({ method: 'PUT', url, payload: { objective: 'x'.repeat(4001) } });
      expect(tooLong.statusCode).toBe(422);
      expect(tooLong.json().message).toContain('4000');
      const exactly = await app.inject({ method: 'PUT', url, payload: { objective: 'x'.repeat(4000) } });
      expect(exactly.statusCode).toBe(200);
      const unknown = await app.inject({ method: 'GET', url: `/api/threads/${randomUUID()}/goal` });
      expect(unknown.statusCode).toBe(404);
      const badBody = await app.inject({ method: 'PUT', url, payload: { goal: 'x' } });
      expect(badBody.statusCode).toBe(400);
    });
  });

  describe('/api/memory', () => {
    it("returns a user's facts and forgets them on DELETE; users stay apart", async () => {
      const store = new MemoryStore(database.db);
      const options = { source: 'thread-1', maxFacts: 100, confidenceThreshold: 0.7, now: new Date() };
      await store.apply('erin', { summaries: { topOfMind: 'Launching v2.' }, newFacts: [{ content: 'Uses vim', category: 'preference', confidence: 0.9 }], factsToRemove: [] }, options);
      const erin = await app.inject({ method: 'GET', url: '/api/memory?user_id=erin' });
      expect(erin.json()).toMatchObject({
        user_id: 'erin',
        summaries: { top_of_mind: 'Launching v2.' },
        facts: [{ content: 'Uses vim', category: 'preference', confidence: 0.9, source: 'thread-1' }],
      });
      expect((await app.inject({ method: 'GET', url: '/api/memory' })).json()).toMatchObject({ user_id: 'default', facts: [] });
      expect((await app.inject({ method: 'DELETE', url: '/api/memory?user_id=erin' })).json()).toEqual({ removed: 1 });
      expect((await app.inject({ method: 'GET', url: '/api/memory?user_id=erin' })).json().facts).toEqual([]);
      expect((await app.inject({ method: 'GET', url: '/api/memory?user_id=../etc' })).statusCode).toBe(400);
    });
  });

  describe('/api/skills', () => {
    it('lists skills and switches one off and on', async () => {
      const list = await app.inject({ method: 'GET', url: '/api/skills' });
      expect(list.json().skills).toEqual([
        {
          name: 'summarise',
          description: 'Summarise a document.',
          license: 'MIT',
          allowed_tools: null,
          source: 'public',
          path: '/mnt/skills/public/summarise/SKILL.md',
          enabled: true,
        },
      ]);
      const off = await app.inject({ method: 'PUT', url: '/api/skills/summarise', payload: { enabled: false } });
      expect(off.json().enabled).toBe(false);
      expect((await app.inject({ method: 'GET', url: '/api/skills' })).json().skills[0].enabled).toBe(false);
      await app.inject({ method: 'PUT', url: '/api/skills/summarise', payload: { enabled: true } });
      expect((await app.inject({ method: 'PUT', url: '/api/skills/nope', payload: { enabled: true } })).statusCode).toBe(404);
    });
  });
});
