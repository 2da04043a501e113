import { describe, expect, it } from 'vitest';
import { webRoutes } from '../../../channels/web/routes.js';
import { GATEWAY_ROUTES } from '../../e2e/gateway-routes.js';
import { buildTestApp } from './stub-runtime.js';

/** `METHOD /path` lines from Fastify's route tree (`printRoutes({ commonPrefix: false })`). */
function routesOf(tree: string): string[] {
  const prefixes: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]+)\))?/.exec(line);
    if (!match) continue;
    const depth = (match[1] as string).length / 4;
    const path = `${prefixes[depth - 1] ?? ''}${match[2]}`.replace(/(.)\/$/, '$1');
    prefixes[depth] = path;
    for (const method of (match[3] ?? '').split(', ').filter((m) => m !== '' && m !== 'HEAD')) routes.push(`${method} ${path}`);
  }
  return [...new Set(routes)].sort();
}

describe('the gateway route inventory', () => {
  it('lists every route buildApp serves, so the access table of the e2e misses none', async () => {
    const { app } = await buildTestApp({
      auth: { authenticator: { authenticate: async () => undefined }, isPrincipalRequired: true },
      accounts: { users: {} as never, connections: {} as never },
      skills: {} as never,
      outbox: {} as never,
      schedules: {} as never,
      metrics: { render: async () => ({ contentType: 'text/plain', body: '' }), isPublic: false },
      metricsHistory: { intervalSeconds: 60, since: () => [] },
      agents: { list: async () => [] },
      channelRoutes: [{ name: 'github', routes: async (webhook) => void webhook.post('/', async () => ({})) }],
      chatRoutes: [{ name: 'web', routes: async (chat) => chat.register(webRoutes, { chats: {} as never, topic: {} as never, ingress: {} as never, maxFileBytes: 1 }) }],
    });
    await app.ready();
    const served = routesOf(app.printRoutes({ commonPrefix: false }));
    expect(served).toEqual([...GATEWAY_ROUTES.map((r) => `${r.method} ${r.template}`)].sort());
    await app.close();
  });
});
