import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_ROUTES, type GatewayRoute } from './gateway-routes.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Deny by default, under every spelling of a path: the gateway decides on the route that matched,
 * so `/%61pi/...`, absolute-form targets, `//`, `/./`, `/x/../`, upper case and a trailing slash
 * each answer exactly as the canonical path does (issue #13: the raw-URL check let all of these
 * past the key check).
 */

const ADMIN_TOKEN = 'admin-token-for-route-access';
let server: ServerProcess;
let port: number;
let alice: string;
let bobThread: string;

interface Answer {
  status: number;
  body: string;
}

/** Sends `target` byte for byte as the request target (no URL normalisation on the way). */
function send(method: string, target: string, key?: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path: target,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/** The route's path with test values for its parameters; `upper` capitalises the fixed segments only. */
function pathOf(route: GatewayRoute, options: { upper?: boolean } = {}): string {
  const values: Record<string, string> = {
    thread_id: bobThread,
    run_id: randomUUID(),
    provider: 'telegram',
    connection_id: randomUUID(),
    user_id: randomUUID(),
    name: 'no-such-skill',
    id: 'zzzzzz',
    fact_id: randomUUID(),
  };
  return route.template
    .split('/')
    .map((segment) => (segment.startsWith(':') ? (values[segment.slice(1)] as string) : options.upper ? segment.toUpperCase() : segment))
    .join('/');
}

/** Every spelling of one route's path that must answer as the canonical one. */
function spellingsOf(route: GatewayRoute): Record<string, string> {
  const path = pathOf(route);
  const firstLetter = path.search(/[a-z]/);
  const encoded =
    firstLetter === -1 ? path : `${path.slice(0, firstLetter)}%${path.charCodeAt(firstLetter).toString(16)}${path.slice(firstLetter + 1)}`;
  return {
    canonical: path,
    'percent-encoded letter': encoded,
    'absolute form': `http://127.0.0.1:${port}${path}`,
    'double slash': `/${path}`,
    'dot segment': `/.${path}`,
    'encoded dot segment': `/%2e${path}`,
    'parent segment': `/x/..${path}`,
    'upper case': pathOf(route, { upper: true }),
    'trailing slash': path === '/' ? '//' : `${path}/`,
  };
}

/** A body each route accepts or refuses the same way under every spelling, changing nothing that matters. */
function bodyOf(route: GatewayRoute): unknown {
  if (route.method === 'GET' || route.method === 'DELETE') return undefined;
  if (route.template.includes('/runs')) return { assistant_id: 'lead_agent', input: { messages: [{ role: 'human', content: 'hi' }] } };
  if (route.template.endsWith('/goal')) return { objective: 'take over' };
  if (route.template === '/api/skills/:name') return { enabled: false };
  if (route.template === '/api/users') return { name: 'mallory' };
  if (route.template === '/api/users/:user_id') return { can_use_shell: true };
  if (route.template === '/api/schedules/:id') return { missed: 'skip' };
  return {};
}

beforeAll(async () => {
  const { path } = writeConfig(`server: { port: 0 }
auth: { admin_token: ${ADMIN_TOKEN} }
channel_connections: { enabled: true }
channels:
  github: { enabled: true, webhook_secret: route-access-secret }
`);
  server = await startServerProcess(['--config', path]);
  port = Number(new URL(server.url).port);
  const created = async (name: string) => JSON.parse((await send('POST', '/api/users', ADMIN_TOKEN, { name })).body).api_key as string;
  alice = await created('alice');
  const bob = await created('bob');
  bobThread = JSON.parse((await send('POST', '/api/threads', bob, {})).body).thread_id as string;
  expect((await send('PUT', `/api/threads/${bobThread}/goal`, bob, { objective: 'bob ships the release' })).status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
});

describe('every route under every spelling', () => {
  it.each(GATEWAY_ROUTES.map((route) => [`${route.method} ${route.template}`, route] as const))(
    'without a key, %s answers as its canonical path (401 unless public)',
    async (_name, route) => {
      const answers: Record<string, string> = {};
      for (const [spelling, target] of Object.entries(spellingsOf(route))) {
        const { status, body } = await send(route.method, target, undefined, bodyOf(route));
        // The key check's own 401 (its one text); a webhook's refused signature is another 401.
        answers[spelling] = `${status} ${body.includes('Missing or invalid API key.') ? 'no key' : ''}`.trim();
      }
      const canonical = answers.canonical as string;
      if (route.isPublic) expect(canonical).not.toContain('no key');
      else expect(canonical).toBe('401 no key');
      expect(answers).toEqual(Object.fromEntries(Object.keys(answers).map((spelling) => [spelling, canonical])));
    },
  );

  // With another user's key: bob's thread and schedules stay hidden (404), operator routes stay closed (403).
  const asAlice = GATEWAY_ROUTES.filter(
    (route) =>
      route.template.startsWith('/api/threads/') ||
      route.template === '/api/users' ||
      route.template.startsWith('/api/users/') ||
      route.template === '/api/audit/connections' ||
      route.template === '/api/skills/:name' ||
      route.template.startsWith('/api/schedules/') ||
      route.template.startsWith('/api/outbox') ||
      route.template.startsWith('/api/conversations/') ||
      route.template === '/api/runs' ||
      route.template === '/metrics' ||
      route.template === '/api/metrics/history' ||
      route.template === '/api/agents' ||

      route.template === '/api/memory/facts/:fact_id' ||
      route.template === '/api/channels/connections/:connection_id',
  );
  it.each(asAlice.map((route) => [`${route.method} ${route.template}`, route] as const))(
    "with alice's key, %s answers as its canonical path: 404 for bob's thread, 403 for the operator's routes",
    async (_name, route) => {
      const answers: Record<string, number> = {};
      for (const [spelling, target] of Object.entries(spellingsOf(route))) {
        answers[spelling] = (await send(route.method, target, alice, bodyOf(route))).status;
      }
      const expected =
        route.template.startsWith('/api/threads/') ||
        route.template.startsWith('/api/conversations/') ||
        route.template.includes(':connection_id') ||
        route.template.startsWith('/api/schedules/') ||
        route.template.includes(':fact_id')
          ? 404
          : 403;
      expect(answers).toEqual(Object.fromEntries(Object.keys(answers).map((spelling) => [spelling, expected])));
    },
  );

  it("gives alice her own goals under every spelling, never bob's", async () => {
    const route = GATEWAY_ROUTES.find((r) => r.method === 'GET' && r.template === '/api/goals') as GatewayRoute;
    for (const target of Object.values(spellingsOf(route))) {
      const answer = await send('GET', `${target}?user_id=bob`, alice);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body).goals).toEqual([]);
      expect(answer.body).not.toContain('bob ships the release');
    }
  });

  it("gives alice her own memory under every spelling, never bob's", async () => {
    const route = GATEWAY_ROUTES.find((r) => r.method === 'GET' && r.template === '/api/memory') as GatewayRoute;
    for (const target of Object.values(spellingsOf(route))) {
      const answer = await send('GET', `${target}?user_id=bob`, alice);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body).user_id).not.toBe('bob');
    }
  });

  it('answers HEAD of every GET route as the GET, under every spelling: 401 unless public', async () => {
    for (const route of GATEWAY_ROUTES.filter((r) => r.method === 'GET')) {
      for (const target of Object.values(spellingsOf(route))) {
        const { status } = await send('HEAD', target);
        expect({ route: route.template, target, status }).toEqual({ route: route.template, target, status: route.isPublic ? 200 : 401 });
      }
    }
  });

  it('answers a path no route serves with 401 without a key and 404 with one, under every spelling', async () => {
    for (const target of ['/api/nothing-here', '/%61pi/nothing-here', '//api/nothing-here', `http://127.0.0.1:${port}/nope`]) {
      expect((await send('GET', target)).status).toBe(401);
      expect((await send('GET', target, ADMIN_TOKEN)).status).toBe(404);
    }
  });
});
