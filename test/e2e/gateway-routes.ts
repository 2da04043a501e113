/**
 * Every route the gateway serves, as `buildApp` registers it (checked against its route table in
 * test/unit/gateway/route-inventory.test.ts, so a new route cannot be left out of the access
 * table of test/e2e/route-access.test.ts).
 */
export interface GatewayRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Fastify's template: `:name` segments are parameters. */
  template: string;
  /** Answers without a key. */
  isPublic: boolean;
}

export const GATEWAY_ROUTES: readonly GatewayRoute[] = [
  { method: 'GET', template: '/', isPublic: true },
  { method: 'GET', template: '/console.js', isPublic: true },
  { method: 'GET', template: '/console.css', isPublic: true },
  { method: 'GET', template: '/chat', isPublic: true },
  { method: 'GET', template: '/chat.js', isPublic: true },
  { method: 'GET', template: '/chat.css', isPublic: true },
  // The console's pages: each module in src/gateway/console/pages/ is a page and its script.
  { method: 'GET', template: '/console/shared.js', isPublic: true },
  { method: 'GET', template: '/console/health', isPublic: true },
  { method: 'GET', template: '/console/pages/health.js', isPublic: true },
  { method: 'GET', template: '/console/charts', isPublic: true },
  { method: 'GET', template: '/console/pages/charts.js', isPublic: true },
  { method: 'GET', template: '/console/agents', isPublic: true },
  { method: 'GET', template: '/console/pages/agents.js', isPublic: true },
  { method: 'GET', template: '/health', isPublic: true },
  { method: 'GET', template: '/metrics', isPublic: false },
  { method: 'GET', template: '/api/metrics/history', isPublic: false },
  { method: 'GET', template: '/api/agents', isPublic: false },
  { method: 'GET', template: '/api/models', isPublic: false },
  { method: 'POST', template: '/api/threads', isPublic: false },
  { method: 'GET', template: '/api/threads/:thread_id', isPublic: false },
  { method: 'POST', template: '/api/threads/:thread_id/runs/stream', isPublic: false },
  { method: 'POST', template: '/api/threads/:thread_id/runs/wait', isPublic: false },
  { method: 'POST', template: '/api/threads/:thread_id/runs', isPublic: false },
  { method: 'GET', template: '/api/threads/:thread_id/runs/:run_id', isPublic: false },
  { method: 'POST', template: '/api/threads/:thread_id/runs/:run_id/cancel', isPublic: false },
  { method: 'GET', template: '/api/threads/:thread_id/goal', isPublic: false },
  { method: 'PUT', template: '/api/threads/:thread_id/goal', isPublic: false },
  { method: 'DELETE', template: '/api/threads/:thread_id/goal', isPublic: false },
  { method: 'GET', template: '/api/memory', isPublic: false },
  { method: 'DELETE', template: '/api/memory', isPublic: false },
  { method: 'GET', template: '/api/me', isPublic: false },
  { method: 'GET', template: '/api/users', isPublic: false },
  { method: 'POST', template: '/api/users', isPublic: false },
  { method: 'PATCH', template: '/api/users/:user_id', isPublic: false },
  { method: 'DELETE', template: '/api/users/:user_id', isPublic: false },
  { method: 'POST', template: '/api/users/:user_id/rotate-key', isPublic: false },
  { method: 'GET', template: '/api/audit/connections', isPublic: false },
  { method: 'GET', template: '/api/channels/providers', isPublic: false },
  { method: 'GET', template: '/api/channels/connections', isPublic: false },
  { method: 'POST', template: '/api/channels/:provider/connect', isPublic: false },
  { method: 'DELETE', template: '/api/channels/connections/:connection_id', isPublic: false },
  { method: 'GET', template: '/api/skills', isPublic: false },
  { method: 'PUT', template: '/api/skills/:name', isPublic: false },
  { method: 'GET', template: '/api/schedules', isPublic: false },
  { method: 'GET', template: '/api/schedules/:id', isPublic: false },
  { method: 'PATCH', template: '/api/schedules/:id', isPublic: false },
  { method: 'DELETE', template: '/api/schedules/:id', isPublic: false },
  { method: 'POST', template: '/api/schedules/:id/pause', isPublic: false },
  { method: 'POST', template: '/api/schedules/:id/resume', isPublic: false },
  { method: 'GET', template: '/api/outbox', isPublic: false },
  { method: 'POST', template: '/api/outbox/retry', isPublic: false },
  // The web chat's routes for people (on by default): keys as for the rest of the API.
  { method: 'GET', template: '/api/chat/web/conversations', isPublic: false },
  { method: 'POST', template: '/api/chat/web/conversations', isPublic: false },
  { method: 'DELETE', template: '/api/chat/web/conversations/:id', isPublic: false },
  { method: 'GET', template: '/api/chat/web/conversations/:id/messages', isPublic: false },
  { method: 'POST', template: '/api/chat/web/conversations/:id/messages', isPublic: false },
  { method: 'POST', template: '/api/chat/web/conversations/:id/files', isPublic: false },
  { method: 'GET', template: '/api/chat/web/conversations/:id/files/:file_id', isPublic: false },
  { method: 'GET', template: '/api/chat/web/conversations/:id/events', isPublic: false },
  // Each enabled channel's webhook; the e2e enables GitHub's. They prove themselves by signature.
  { method: 'POST', template: '/api/webhooks/github', isPublic: true },
];
