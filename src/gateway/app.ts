import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { authenticateRequest } from './auth.js';
import { canonicalUrl } from './canonical-url.js';
import { handleError, handleNotFound } from './error-handler.js';
import { accountRoutes } from './routes/accounts.js';
import { agentRoutes } from './routes/agents.js';
import { consoleRoutes } from './routes/console.js';
import { goalRoutes } from './routes/goals.js';
import { healthRoutes } from './routes/health.js';
import { langGraphRoutes } from './routes/langgraph/index.js';
import { memoryRoutes } from './routes/memory.js';
import { metricsHistoryRoutes, metricsRoutes } from './routes/metrics.js';
import { modelRoutes } from './routes/models.js';
import { outboxRoutes } from './routes/outbox.js';
import { scheduleRoutes } from './routes/schedules.js';
import { skillRoutes } from './routes/skills.js';
import { webhookRoutes } from './routes/webhooks/index.js';
import { chatRoutes } from './routes/chat.js';
import type { GatewayDeps } from './types.js';
import { zodSerializerCompiler, zodValidatorCompiler } from './validation.js';

export type { ChannelRoutes, GatewayDeps, HealthReport } from './types.js';

/** Paths whose requests are logged only at debug. */
const QUIET_PATHS: ReadonlySet<string> = new Set(['/health', '/metrics']);

/** Whether `request` is for a quiet path, however it was spelled: the route it matched, else its path as the router reads it. */
function isQuietRequest(request: { url?: string; routeOptions?: { url?: string } }): boolean {
  const routed = request.routeOptions?.url;
  if (routed !== undefined) return QUIET_PATHS.has(routed);
  const path = canonicalUrl(request.url ?? '/').split('?')[0] as string;
  try {
    return QUIET_PATHS.has(decodeURIComponent(path).toLowerCase());
  } catch {
    return false;
  }
}

/** Request bodies above this get 413; a webhook route may set its own `bodyLimit`. */
export const API_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Builds the HTTP gateway; it never listens (`src/main.ts` does) and closes none of `deps`.
 *
 * Routes: `GET /health`, `GET /api/models`, the LangGraph API subset under `/api/threads`, a
 * thread's goal (`/api/threads/:id/goal`), `/api/memory`, `/api/skills`, `/api/metrics/history` and `/api/agents` (when given), and
 * each channel's webhooks under `/api/webhooks/<name>` and its routes for people (the web chat)
 * under `/api/chat/<name>`. Deny by default: with `deps.auth`, only
 * routes declared public (`PUBLIC_ROUTE`, every webhook) answer without a key, under any spelling
 * of their path (`canonicalUrl`). Every request gets a UUID request id, echoed as `x-request-id`
 * and logged as `reqId`. Errors answer `{code, message}` as `error-handler.ts` describes.
 *
 * @throws ConfigError when `channelRoutes` names are invalid or repeated.
 */
export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: API_BODY_LIMIT_BYTES,
    // Ids are ours; a client-sent id would let callers write arbitrary text into our logs.
    genReqId: () => randomUUID(),
    // Probes and scrapes come every few seconds: their request lines would drown the log, so they
    // are written only when it is at debug.
    logController: new LogController({ disableRequestLogging: (request) => isQuietRequest(request) && !deps.logger.isLevelEnabled('debug') }),
    return503OnClosing: true,
    // Routing sees one spelling of each path, so a route's access rule holds for all of them.
    rewriteUrl: (request) => canonicalUrl(request.url ?? '/'),
    routerOptions: { caseSensitive: false },
  });
  app.setValidatorCompiler(zodValidatorCompiler);
  app.setSerializerCompiler(zodSerializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.decorateRequest('principal', undefined);
  if (deps.auth) app.addHook('onRequest', authenticateRequest(deps.auth));

  await app.register(consoleRoutes);
  await app.register(healthRoutes, { health: deps.health });
  if (deps.metrics) await app.register(metricsRoutes, deps.metrics);
  if (deps.metricsHistory) await app.register(metricsHistoryRoutes, { prefix: '/api', history: deps.metricsHistory });
  if (deps.agents) await app.register(agentRoutes, { prefix: '/api', list: deps.agents.list });
  await app.register(modelRoutes, { prefix: '/api', runtime: deps.runtime });
  await app.register(langGraphRoutes, { prefix: '/api', runtime: deps.runtime });
  await app.register(goalRoutes, { prefix: '/api', runtime: deps.runtime });
  await app.register(memoryRoutes, { prefix: '/api', runtime: deps.runtime });
  if (deps.accounts) await app.register(accountRoutes, { prefix: '/api', ...deps.accounts });
  if (deps.skills) await app.register(skillRoutes, { prefix: '/api', skills: deps.skills });
  if (deps.outbox) await app.register(outboxRoutes, { prefix: '/api', outbox: deps.outbox });
  if (deps.schedules) await app.register(scheduleRoutes, { prefix: '/api', schedules: deps.schedules });
  await app.register(webhookRoutes, { prefix: '/api/webhooks', channels: deps.channelRoutes ?? [] });
  await app.register(chatRoutes, { prefix: '/api/chat', channels: deps.chatRoutes ?? [] });
  // pino's Logger and Fastify's FastifyBaseLogger differ only in generics; callers need neither.
  return app as unknown as FastifyInstance;
}
