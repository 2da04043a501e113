import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { apiClient, type Json } from './api-client.js';
import { chatTurn, createUser, memoryResponder, startConsoleServer } from './console-fixtures.js';
import type { ServerProcess } from './server-process.js';
import { webChat } from './web-chat-client.js';

/**
 * What the console's memory, goals, schedules and skills pages call, through the real server, as
 * attacks first: with alice's key, bob's memory, schedules and goals can be neither read nor
 * changed, under any query parameter; then the routes the pages added (`DELETE
 * /api/memory/facts/:fact_id`, `GET /api/goals`). Memory and schedules are made the way people
 * make them: by chatting (the web chat), the fake model answering the memory extraction.
 */

const ADMIN_TOKEN = 'console-user-api-operator-token-0123';

let model: FakeOpenAI;
let server: ServerProcess | undefined;
const url = () => server?.url ?? '';
const api = apiClient(url);

interface Person {
  id: string;
  key: string;
  chat: ReturnType<typeof webChat>;
}
let alice: Person;
let bob: Person;

async function createPerson(name: string): Promise<Person> {
  const { id, key } = await createUser(api, ADMIN_TOKEN, name);
  return { id, key, chat: webChat(url, key) };
}

/** Says `text` in a new web chat conversation and resolves with the agent's final answer. */
async function chatSays(person: Person, text: string): Promise<string> {
  return (await chatTurn(person.chat, text)).answer;
}

/** Asks until `check` gives a value: memory extraction runs after the turn, with no message to wait for. */
async function eventually<T>(check: () => Promise<T | undefined>): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await check();
      if (value === undefined) throw new Error('not yet');
      return value;
    },
    { timeout: 30_000, interval: 50 },
  );
}

async function factsOf(person: Person): Promise<Json[]> {
  return ((await api('GET', '/api/memory', person.key)).body?.facts ?? []) as Json[];
}

async function learn(person: Person, fact: string): Promise<Json> {
  await chatSays(person, `please remember ${fact}`);
  return eventually(async () => (await factsOf(person)).find((f) => f.content === fact));
}

async function newThreadWithGoal(person: Person, objective: string): Promise<string> {
  const thread = await api('POST', '/api/threads', person.key, {});
  expect(thread.status).toBe(200);
  const threadId = thread.body?.thread_id as string;
  expect((await api('PUT', `/api/threads/${threadId}/goal`, person.key, { objective })).status).toBe(200);
  return threadId;
}

beforeAll(async () => {
  model = new FakeOpenAI({ apiKey: 'sk-user-api' });
  model.respond = memoryResponder;
  await model.start();
  server = await startConsoleServer(ADMIN_TOKEN, model, 'sk-user-api', `memory: { debounce_seconds: 0 }
`);
  alice = await createPerson('alice');
  bob = await createPerson('bob');
});

afterAll(async () => {
  await server?.stop();
  await model?.stop();
});

describe('memory: a person reaches only their own', () => {
  let bobsFact: Json;
  beforeAll(async () => {
    bobsFact = await learn(bob, 'bob drinks green tea');
    await learn(alice, 'alice deploys on Fridays');
  });

  it("never shows alice bob's memory, whatever user_id she asks for", async () => {
    for (const query of [`?user_id=${bob.id}`, '?user_id=default', '']) {
      const answer = await api('GET', `/api/memory${query}`, alice.key);
      expect(answer.status).toBe(200);
      expect(answer.body?.user_id).toBe(alice.id);
      expect(JSON.stringify(answer.body)).not.toContain('green tea');
    }
  });

  it("never lets alice forget bob's memory, all of it or one fact", async () => {
    // user_id is not hers to choose: it is her own memory that goes.
    const forgot = await api('DELETE', `/api/memory?user_id=${bob.id}`, alice.key);
    expect(forgot).toEqual({ status: 200, body: { removed: 1 } });
    expect(await factsOf(alice)).toEqual([]);
    expect((await factsOf(bob)).map((f) => f.content)).toEqual(['bob drinks green tea']);
    for (const query of ['', `?user_id=${bob.id}`]) {
      const answer = await api('DELETE', `/api/memory/facts/${bobsFact.id}${query}`, alice.key);
      expect(answer.status).toBe(404);
      expect(answer.body?.message).toBe('Fact not found');
    }
    expect((await factsOf(bob)).map((f) => f.content)).toEqual(['bob drinks green tea']);
  });

  it('lets a person forget one of their facts, and only that one', async () => {
    await learn(alice, 'alice likes tabs');
    const mine = await factsOf(alice);
    const tabs = mine.find((f) => f.content === 'alice likes tabs') as Json;
    const answer = await api('DELETE', `/api/memory/facts/${tabs.id}`, alice.key);
    expect(answer).toEqual({ status: 200, body: { removed: 1 } });
    const after = (await factsOf(alice)).map((f) => f.content);
    expect(after).not.toContain('alice likes tabs');
    expect(after.length).toBe(mine.length - 1);
    // Gone is gone: a second delete is a 404, as for a fact that never was.
    expect((await api('DELETE', `/api/memory/facts/${tabs.id}`, alice.key)).status).toBe(404);
    expect((await api('DELETE', `/api/memory/facts/${randomUUID()}`, alice.key)).status).toBe(404);
  });

  it('refuses a malformed fact id with a 400 that says what is expected, and no key with a 401', async () => {
    const bad = await api('DELETE', '/api/memory/facts/not-a-uuid', alice.key);
    expect(bad.status).toBe(400);
    expect(bad.body?.message).toContain('a fact id');
    expect((await api('DELETE', `/api/memory/facts/${bobsFact.id}`, undefined)).status).toBe(401);
  });

  it("lets the operator read a user's memory with user_id and forget one of their facts", async () => {
    const read = await api('GET', `/api/memory?user_id=${bob.id}`, ADMIN_TOKEN);
    expect(read.body).toMatchObject({ user_id: bob.id, facts: [{ content: 'bob drinks green tea' }] });
    // Without user_id the operator's call means the server's `default` user, never someone else's fact.
    expect((await api('DELETE', `/api/memory/facts/${bobsFact.id}`, ADMIN_TOKEN)).status).toBe(404);
    expect((await api('DELETE', `/api/memory/facts/${bobsFact.id}?user_id=${bob.id}`, ADMIN_TOKEN)).status).toBe(200);
    expect(await factsOf(bob)).toEqual([]);
  });
});

describe('schedules: a person reaches only their own', () => {
  let bobsSchedule: string;
  beforeAll(async () => {
    const confirmation = await chatSays(bob, '/schedule every 1h check the nightly build');
    bobsSchedule = (/^Scheduled ([a-z0-9]{6}):/.exec(confirmation)?.[1] ?? '') as string;
    expect(bobsSchedule).not.toBe('');
    await chatSays(alice, '/schedule every 2h water the plants');
  });

  async function bobsState(): Promise<string> {
    return (await api('GET', `/api/schedules/${bobsSchedule}`, bob.key)).body?.schedule.state as string;
  }

  it("never lists bob's schedule to alice", async () => {
    const listed = await api('GET', '/api/schedules', alice.key);
    expect(listed.status).toBe(200);
    expect(listed.body?.schedules.map((s: Json) => s.task)).toEqual(['water the plants']);
    expect(listed.body?.schedules.every((s: Json) => s.owner_user_id === alice.id)).toBe(true);
    // No query parameter widens it.
    expect((await api('GET', `/api/schedules?owner_user_id=${bob.id}`, alice.key)).status).toBe(400);
  });

  it("answers 404 to alice reading, pausing, resuming, changing or deleting bob's schedule, and changes nothing", async () => {
    const attempts: [string, string, unknown][] = [
      ['GET', `/api/schedules/${bobsSchedule}`, undefined],
      ['POST', `/api/schedules/${bobsSchedule}/pause`, undefined],
      ['POST', `/api/schedules/${bobsSchedule}/resume`, undefined],
      ['PATCH', `/api/schedules/${bobsSchedule}`, { missed: 'skip' }],
      ['DELETE', `/api/schedules/${bobsSchedule}`, undefined],
    ];
    for (const [method, path, body] of attempts) {
      const answer = await api(method, path, alice.key, body);
      expect({ method, path, status: answer.status, text: JSON.stringify(answer.body) }).toEqual({
        method,
        path,
        status: 404,
        text: expect.not.stringContaining('nightly build'),
      });
    }
    const mine = await api('GET', `/api/schedules/${bobsSchedule}`, bob.key);
    expect(mine.body?.schedule).toMatchObject({ state: 'active', missed: 'run_once', task: 'check the nightly build' });
  });

  it("lets bob pause and resume his own, and the operator see it without its words", async () => {
    expect((await api('POST', `/api/schedules/${bobsSchedule}/pause`, bob.key)).status).toBe(200);
    expect(await bobsState()).toBe('paused');
    expect((await api('POST', `/api/schedules/${bobsSchedule}/resume`, bob.key)).status).toBe(200);
    expect(await bobsState()).toBe('active');
    const all = await api('GET', '/api/schedules', ADMIN_TOKEN);
    const seen = all.body?.schedules.find((s: Json) => s.id === bobsSchedule);
    expect(seen).toMatchObject({ owner_user_id: bob.id, task_chars: 'check the nightly build'.length });
    expect(seen.task).toBeUndefined();
  });
});

describe('goals: a person reaches only their own threads', () => {
  let bobsThread: string;
  let alicesThread: string;
  beforeAll(async () => {
    bobsThread = await newThreadWithGoal(bob, 'ship the release notes');
    alicesThread = await newThreadWithGoal(alice, 'tidy the backlog');
  });

  it("lists only alice's own goals to alice, whatever user_id she asks for", async () => {
    for (const query of ['', `?user_id=${bob.id}`]) {
      const listed = await api('GET', `/api/goals${query}`, alice.key);
      expect(listed.status).toBe(200);
      expect(listed.body?.goals).toEqual([
        { thread_id: alicesThread, conversation: null, status: 'new', goal: expect.objectContaining({ objective: 'tidy the backlog', last_evaluation: null }) },
      ]);
    }
  });

  it("answers 404 to alice reading, setting or clearing bob's thread's goal, and bob's goal stays", async () => {
    for (const [method, body] of [['GET'], ['PUT', { objective: 'take over' }], ['DELETE']] as const) {
      expect((await api(method, `/api/threads/${bobsThread}/goal`, alice.key, body)).status).toBe(404);
    }
    expect((await api('GET', `/api/threads/${bobsThread}/goal`, bob.key)).body?.goal.objective).toBe('ship the release notes');
  });

  it('shows the operator every goal, or one account\'s with user_id', async () => {
    const all = await api('GET', '/api/goals', ADMIN_TOKEN);
    expect(all.body?.goals.map((g: Json) => g.thread_id).sort()).toEqual([alicesThread, bobsThread].sort());
    const bobs = await api('GET', `/api/goals?user_id=${bob.id}`, ADMIN_TOKEN);
    expect(bobs.body?.goals.map((g: Json) => g.goal.objective)).toEqual(['ship the release notes']);
  });

  it('drops a cleared goal from the list, and refuses a bad limit with a 400', async () => {
    const thread = await newThreadWithGoal(alice, 'write the changelog');
    expect((await api('GET', '/api/goals', alice.key)).body?.goals).toHaveLength(2);
    expect((await api('DELETE', `/api/threads/${thread}/goal`, alice.key)).status).toBe(200);
    expect((await api('GET', '/api/goals', alice.key)).body?.goals.map((g: Json) => g.thread_id)).toEqual([alicesThread]);
    const bad = await api('GET', '/api/goals?limit=0', alice.key);
    expect(bad.status).toBe(400);
    expect((await api('GET', '/api/goals', undefined)).status).toBe(401);
  });
});

describe('skills: the operator switches them', () => {
  it('refuses a user with 403 and lets the operator switch a skill off and on', async () => {
    const { body } = await api('GET', '/api/skills', ADMIN_TOKEN);
    const skill = body?.skills[0] as Json;
    expect(skill).toBeDefined();
    expect((await api('PUT', `/api/skills/${skill.name}`, alice.key, { enabled: false })).status).toBe(403);
    expect((await api('PUT', `/api/skills/${skill.name}`, ADMIN_TOKEN, { enabled: !skill.enabled })).body?.enabled).toBe(!skill.enabled);
    expect((await api('PUT', `/api/skills/${skill.name}`, ADMIN_TOKEN, { enabled: skill.enabled })).body?.enabled).toBe(skill.enabled);
  });
});
