import type { FastifyPluginAsync } from 'fastify';
import type { ChannelConnections } from '../accounts/connections.js';
import type { AgentOverview } from '../agent/agent-overview.js';
import type { McpServerStatus } from '../agent/mcp/servers.js';
import type { ModelChecks } from '../agent/model-health.js';
import type { SkillRegistry } from '../agent/skills/index.js';
import type { Outbox } from '../channel/outbox.js';
import type { UsersRepo } from '../db/repos/users-repo.js';
import type { Logger } from '../logger.js';
import type { AgentRuntime } from '../runtime/types.js';
import type { ScheduleBook } from '../schedules/book.js';
import type { Authenticator } from './auth.js';
import type { MetricsHistorySource } from './routes/metrics.js';

/** What `GET /health` reports; `ok` is false when the database is down. */
export interface HealthReport {
  ok: boolean;
  database: { ok: boolean; kind: string; error?: string };
  /** The inbound queue: `in-process`, or `redis` shared by every process. */
  bus: { ok: boolean; kind: 'in-process' | 'redis'; error?: string };
  /** Keyed by channel name (`telegram`, `slack`, ...); `reason` says why one is not running. */
  channels: Record<string, { running: boolean; standby?: boolean; reason?: string }>;
  /**
   * The models people can pick, and how each configured model answered its last check (the
   * server always reports `checks`; `{}` with a remote agent, whose models are its own). A failing
   * model does not make `ok` false: the server runs, and the check says what is wrong.
   */
  model: { configured: boolean; models: string[]; checks?: ModelChecks };
  /** Where the agent runs: in this process, or on the agent server at `host` (`runtime.url`). Absent when the process reports none. */
  runtime?: { kind: 'embedded' } | { kind: 'remote'; host: string };
  /**
   * How shell commands are isolated: `bubblewrap`, or `none` (unsandboxed); `isExplicit` = the
   * operator chose it, `reason` = why isolation is off. Absent when the process reports none.
   */
  sandbox?: { isolation: 'bubblewrap' | 'none'; isExplicit: boolean; reason?: string };
  /**
   * Replies waiting in the outbox for another attempt (`pending`) and dead letters (`dead`): not
   * delivered by their deadline, or refused by the platform. Absent when it could not be read.
   */
  outbox?: { pending: number; dead: number };
  /**
   * Each MCP server of `mcp_servers:`: `ready`, `connecting`, or `failed` with the reason (it is
   * retried); a server that is down costs the agent its tools, not the process its health.
   * Absent when none is configured.
   */
  mcp?: Record<string, McpServerStatus>;
}

/** A channel's webhook routes, mounted at `/api/webhooks/<name>` in their own encapsulated context. */
export interface ChannelRoutes {
  /** Path segment, e.g. `telegram`; must match `[a-z0-9-]+`. */
  name: string;
  /** Registered with prefix `/api/webhooks/<name>`; may add its own raw-body parser and `bodyLimit`. */
  routes: FastifyPluginAsync;
  /** Resolves when the channel is ready for its deliveries (its first start ended); requests wait for it, unread. */
  ready?: () => Promise<void>;
}

/** Everything the HTTP gateway needs; `buildApp` owns none of it and closes none of it. */
export interface GatewayDeps {
  runtime: AgentRuntime;
  /**
   * Called per `GET /health`; should be cheap (a database ping, flags already in memory).
   * `checkModels` (from `?check=models`): check the models first (shared, at most once per 10 s).
   */
  health: (options?: { checkModels?: boolean }) => Promise<HealthReport>;
  /** Serves `GET /metrics` (Prometheus) when given; public only when `isPublic`, else it needs a key like the API. */
  metrics?: { render: () => Promise<{ contentType: string; body: string }>; isPublic: boolean };
  /** Serves `GET /api/metrics/history` (the console's charts; operator only) when given. */
  metricsHistory?: MetricsHistorySource;
  /** Serves `GET /api/agents` (the agents folder as the operator sees it) when given. */
  agents?: { list: () => Promise<AgentOverview[]> };
  /** Fastify logs through it (request ids included as `reqId`). */
  logger: Logger;
  channelRoutes?: ChannelRoutes[];
  /** Channels' routes for people with their own key (the web chat), under `/api/chat/<name>`. */
  chatRoutes?: ChannelRoutes[];
  /** Serves `/api/outbox` (the operator's view of undelivered replies) when given. */
  outbox?: Outbox;
  /** Serves `/api/schedules` when given. */
  schedules?: ScheduleBook;
  /** Serves `/api/skills` when given. */
  skills?: SkillRegistry;
  /** Bearer-key authentication of every route not declared public (see `authenticateRequest`). */
  auth?: {
    authenticator: Authenticator;
    /** Every route not declared public needs a key; otherwise a key is optional (single-user, loopback). */
    isPrincipalRequired: boolean;
  };
  /** Serves `/api/me`, `/api/users` and `/api/channels/*` when given. */
  accounts?: { users: UsersRepo; connections: ChannelConnections };
}
