import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoResponder, FakeOpenAI } from '../fakes/openai/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';
import { agentFinals, webChat } from './web-chat-client.js';

/**
 * The operator's history of the last hours and list of agents, through the real server: messages
 * sent through the web chat show up in `GET /api/metrics/history` (sampled every second here),
 * answered and failed apart, with their reply time; `GET /api/agents` lists the agents folder
 * with its GitHub bindings. A person's key gets 403 on both, whatever it asks for.
 */

const ADMIN_TOKEN = 'history-operator-token-0123456789';
let model: FakeOpenAI;
let server: ServerProcess;
let aliceKey: string;

interface HistoryPoint {
  at: string;
  answered: number;
  failed: number;
  channels: Record<string, { answered: number; failed: number }>;
  latency: { p50_seconds: number | null; p95_seconds: number | null };
  errors: { total: number };
}

/** `key` null: no key at all. */
// biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field.
async function get(path: string, key: string | null = ADMIN_TOKEN): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, { headers: key === null ? {} : { authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

async function history(): Promise<HistoryPoint[]> {
  const answer = await get('/api/metrics/history?hours=1');
  expect(answer.status).toBe(200);
  return answer.body.points as HistoryPoint[];
}

const sum = (points: HistoryPoint[], pick: (point: HistoryPoint) => number) => points.reduce((total, point) => total + pick(point), 0);

beforeAll(async () => {
  model = new FakeOpenAI({ apiKey: 'sk-history' });
  await model.start();
  const { dir } = writeConfig('');
  const agents = join(dir, 'agents');
  mkdirSync(join(agents, 'reviewer'), { recursive: true });
  writeFileSync(join(agents, 'reviewer', 'SOUL.md'), '# Reviewer\n\nYou review pull requests.\n');
  writeFileSync(
    join(agents, 'reviewer', 'config.yaml'),
    `description: Reviews pull requests.
model: default
mcp_tools: [orders]
github:
  bot_login: review-app
  bindings:
    - repo: octo-org/hello-world
      triggers:
        pull_request: {actions: [opened]}
        issue_comment: {}
`,
  );
  mkdirSync(join(agents, 'helper'), { recursive: true });
  writeFileSync(join(agents, 'helper', 'SOUL.md'), 'You help with anything.\n');
  server = await startServerProcess([
    '--config',
    writeConfig(`server: { port: 0 }
data_dir: "${join(dir, 'data')}"
auth: { admin_token: ${ADMIN_TOKEN} }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-history, max_retries: 0 }
memory: { enabled: false }
agents: { dir: "${agents}" }
metrics: { history_interval_seconds: 1 }
`).path,
  ]);
  const created = await fetch(`${server.url}/api/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'alice' }),
  });
  aliceKey = ((await created.json()) as { api_key: string }).api_key;
});

afterAll(async () => {
  await server?.stop();
  await model?.stop();
});

describe('GET /api/metrics/history', () => {
  it('shows messages answered and failed through the web chat, with their reply time, within a few samples', async () => {
    model.respond = echoResponder;
    const alice = webChat(() => server.url, aliceKey);
    const conversation = await alice.newConversation();
    const page = await alice.events(conversation);
    await alice.send(conversation, 'first');
    await page.waitFor((frames) => agentFinals(frames)[0]);
    await alice.send(conversation, 'second');
    await page.waitFor((frames) => agentFinals(frames)[1]);
    // The model refuses the third: its reply is an error text, a failed message.
    model.enqueue({ fail: { status: 400, message: 'bad request' } });
    await alice.send(conversation, 'third');
    await page.waitFor((frames) => agentFinals(frames)[2]);
    page.close();

    await expect
      .poll(async () => {
        const points = await history();
        return { answered: sum(points, (p) => p.channels.web?.answered ?? 0), failed: sum(points, (p) => p.channels.web?.failed ?? 0) };
      }, { timeout: 30_000 })
      .toEqual({ answered: 2, failed: 1 });
    const points = await history();
    expect(sum(points, (p) => p.answered)).toBe(2);
    expect(sum(points, (p) => p.failed)).toBe(1);
    // Points are per interval, oldest first, and those with replies have a reply time.
    const times = points.map((p) => Date.parse(p.at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const busy = points.filter((p) => p.answered + p.failed > 0);
    expect(busy.length).toBeGreaterThan(0);
    for (const point of busy) {
      expect(point.latency.p50_seconds).toBeGreaterThan(0);
      expect(point.latency.p95_seconds).toBeGreaterThanOrEqual(point.latency.p50_seconds as number);
    }
    for (const point of points.filter((p) => p.answered + p.failed === 0)) expect(point.latency).toEqual({ p50_seconds: null, p95_seconds: null });
  });

  it('refuses a person, without a key and with bad hours', async () => {
    for (const query of ['', '?hours=1', '?hours=abc', '?user_id=alice', '?hours=6&channel=web']) {
      expect((await get(`/api/metrics/history${query}`, aliceKey)).status).toBe(403);
      expect((await get(`/api/metrics/history${query}`, null)).status).toBe(401);
    }
    for (const query of ['?hours=0', '?hours=7', '?hours=abc', '?hours=-1', '?extra=1']) {
      const answer = await get(`/api/metrics/history${query}`);
      expect(answer.status).toBe(400);
      expect(answer.body.message).toMatch(/^query/);
    }
    expect((await get('/api/metrics/history?hours=7')).body.message).toBe('query.hours: must be at most 6 (the history keeps 6 hours)');
  });
});

describe('GET /api/agents', () => {
  it('lists each agent with its description, model, tools and GitHub bindings', async () => {
    const { status, body } = await get('/api/agents');
    expect(status).toBe(200);
    expect(body.agents.map((agent: { name: string }) => agent.name)).toEqual(['lead', 'helper', 'reviewer']);
    const [lead, helper, reviewer] = body.agents;
    expect(reviewer).toEqual({
      name: 'reviewer',
      description: 'Reviews pull requests.',
      model: 'default',
      skills: null,
      tools: ['orders'],
      enabled: true,
      in_chat: false,
      github_bindings: [{ repo: 'octo-org/hello-world', events: ['issue_comment', 'pull_request'] }],
      problem: null,
    });
    // No config.yaml: the first line of its SOUL.md, everything else the server's.
    expect(helper).toMatchObject({ description: 'You help with anything.', model: null, skills: null, tools: null, github_bindings: [] });
    expect(lead).toMatchObject({ name: 'lead', in_chat: true, github_bindings: [] });
    expect(lead.description.length).toBeGreaterThan(0);
  });

  it('refuses a person whatever they ask, and a caller without a key', async () => {
    for (const query of ['', '?user_id=alice', '?name=reviewer']) {
      expect((await get(`/api/agents${query}`, aliceKey)).status).toBe(403);
      expect((await get(`/api/agents${query}`, null)).status).toBe(401);
    }
    expect((await get('/api/agents?name=reviewer')).status).toBe(400);
  });
});
