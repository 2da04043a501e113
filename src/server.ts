import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ChannelConnections } from './accounts/connections.js';
import { listAgentOverviews } from './agent/agent-overview.js';
import { AgentCatalog } from './agent/catalog.js';
import { type ModelChecks, ModelHealth } from './agent/model-health.js';
import { DEFAULT_AGENT_NAME } from './agent/prompt.js';
import type { SandboxIsolation } from './agent/sandbox/bubblewrap.js';
import { type AgentServices, createAgentServices } from './agent/services.js';
import type { InboundBus } from './bus/types.js';
import { JournaledIntake } from './channel/journaled-intake.js';
import { Outbox, type OutboxCounts } from './channel/outbox.js';
import { ChannelStarter } from './channel/starter.js';
import type { ChannelAdapter, ChannelDefinition, ChannelDeps, ChannelStatus } from './channel/types.js';
import type { Config } from './config/index.js';
import { createCoordination } from './coordination.js';
import { type DatabaseHandle, openDatabase } from './db/index.js';
import { ChannelStateRepo } from './db/repos/channel-state-repo.js';
import { ConversationListRepo } from './db/repos/conversation-list-repo.js';
import { ConversationsRepo } from './db/repos/conversations-repo.js';
import { FollowUpsRepo } from './db/repos/follow-ups-repo.js';
import { SqlOutboxStore } from './db/repos/outbox-repo.js';
import { RunListRepo } from './db/repos/run-list-repo.js';
import { SchedulesRepo } from './db/repos/schedules-repo.js';
import { ThreadMapRepo } from './db/repos/thread-map-repo.js';
import { SqlTurnJournal } from './db/repos/turn-journal-repo.js';
import { UsersRepo } from './db/repos/users-repo.js';
import { WebhookDeliveriesRepo } from './db/repos/webhook-deliveries-repo.js';
import { HostedChatsRepo } from './db/repos/hosted-chats-repo.js';
import { ConfigError, describeError } from './errors.js';
import { buildApp } from './gateway/app.js';
import { createAuthenticator } from './gateway/auth.js';
import type { HealthReport } from './gateway/types.js';
import type { Logger } from './logger.js';
import { ChannelManager } from './manager/channel-manager.js';
import { ThreadResolver } from './manager/threads.js';
import { ServerMetrics } from './metrics.js';
import { MetricsHistory } from './metrics-history.js';
import { DEFAULT_AGENTS_DIR, DEFAULT_SKILLS_DIR, PACKAGE_ROOT } from './paths.js';
import { createEmbeddedRuntime } from './runtime/embedded/index.js';
import type { AgentRuntime } from './runtime/types.js';
import { ScheduleBook } from './schedules/book.js';
import { Scheduler } from './schedules/scheduler.js';
import { createScheduleTaskTool } from './schedules/tool.js';

export interface StartServerOptions {
  config: Config;
  platforms: readonly ChannelDefinition[];
  logger: Logger;
  /** Folder of agent definitions; defaults to `agents.dir` of the config, else the repository's `agents/`. */
  agentsDir?: string;
  /** The process environment: only allow-listed names (PATH, LANG, TZ, …) reach `bash`. */
  environment?: Record<string, string | undefined>;
  /** The config file read, hidden from sandboxed shells even when it lies under `/etc` or `/usr`. */
  configPath?: string | undefined;
}

export interface RunningServer {
  /** `http://host:port` the gateway listens on. */
  url: string;
  /** Stops intake, lets in-flight replies finish within the grace period, then closes everything. */
  stop(): Promise<void>;
}

/** How long shutdown waits for pending memory updates (one model call each). */
const MEMORY_FLUSH_TIMEOUT_MS = 10_000;

/**
 * Wires the straight line of DESIGN.md: channels → bus → manager → runtime, plus the gateway.
 * The only place that knows every part; it still names no platform.
 */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { config, logger } = options;
  const dataDir = resolve(config.data_dir);
  const skillsDir = config.skills.dir === undefined ? DEFAULT_SKILLS_DIR : resolve(config.skills.dir);
  const database = await openDatabase({ url: config.database.url, dataDir, sharedBuffers: config.database.pglite_shared_buffers });
  // PGlite admits one process (its data dir is locked): what this process read stays true until it writes.
  const isSoleProcess = database.kind === 'pglite';
  const agent = await createAgentServices({
    config,
    db: database.db,
    dataDir,
    skillsDir,
    environment: options.environment ?? {},
    logger,
    isSoleProcess,
    // The checkout (or dist/) this server runs from: a sandboxed shell never sees it.
    hiddenPaths: [PACKAGE_ROOT, ...(options.configPath === undefined ? [] : [options.configPath])],
  });
  const agentsDir = options.agentsDir ?? (config.agents.dir === undefined ? DEFAULT_AGENTS_DIR : resolve(config.agents.dir));
  await assertDefaultAgentsExist(config.channels.default_agents, agentsDir);
  const agentCatalog = new AgentCatalog(agentsDir);
  // The schedule book and the agent's schedule_task need each other: the book reaches the runtime late.
  const schedulesRepo = new SchedulesRepo(database.db);
  let scheduler: Scheduler | undefined;
  const schedules = config.schedules.enabled
    ? new ScheduleBook({
        repo: schedulesRepo,
        runtime: { createThread: (request) => runtime.createThread(request) },
        config: config.schedules,
        onChange: () => scheduler?.poke(),
        logger: logger.child({ component: 'schedules' }),
      })
    : undefined;
  const remoteAgent = config.runtime.url === undefined ? undefined : { url: config.runtime.url, host: new URL(config.runtime.url).host };
  const runtime = await createAgentRuntime({ config, logger, database, agent, agentsDir, isSoleProcess, schedules });
  // Alone, or scaled out through Redis: one shared queue, leases, request budgets.
  const coordination = await createCoordination(config, logger);
  const { bus } = coordination;
  const adapters = new Map<string, ChannelAdapter>();
  const starter = new ChannelStarter({
    logger,
    ...(coordination.lease === undefined ? {} : { lease: coordination.lease }),
  });
  const users = new UsersRepo(database.db);
  const connections = new ChannelConnections({
    db: database.db,
    config: config.channel_connections,
    platforms: options.platforms,
    isRunning: (name) => {
      const adapter = adapters.get(name);
      const status = adapter === undefined ? undefined : starter.status(adapter);
      return status !== undefined && (status.running || status.standby === true);
    },
    logger: logger.child({ component: 'connections' }),
  });
  const metrics = new ServerMetrics({
    bus: () => bus.stats(),
    channels: () => [...adapters.values()].map((adapter) => [adapter.name, starter.status(adapter)]),
    outbox: (): Promise<OutboxCounts> => outbox.counts(),
  });
  // The console's charts: samples of the counters above, in memory (lost on restart).
  const metricsHistory = new MetricsHistory({
    registry: metrics.registry,
    intervalMs: config.metrics.history_interval_seconds * 1000,
    onError: (error) => logger.warn({ err: describeError(error) }, 'a metrics history sample failed'),
  });
  const journal = new SqlTurnJournal(database.db);
  // Every process sends what is due: egress runs everywhere, also where a channel's ingress is on standby.
  const outbox = new Outbox({
    store: new SqlOutboxStore(database.db),
    channel: (name) => adapters.get(name),
    logger: logger.child({ component: 'outbox' }),
    deadlineMs: config.channels.outbox_deadline_seconds * 1000,
    metrics,
  });
  // Every adapter commits here: a message is in the journal before the bus takes it.
  const intake = new JournaledIntake({ intake: bus, journal, logger: logger.child({ component: 'intake' }), onDuplicate: (channel) => metrics.duplicate(channel) });
  // Every process fires what is due; the database decides which one fires each occurrence.
  scheduler = config.schedules.enabled
    ? new Scheduler({ repo: schedulesRepo, intake, logger, missedAfterMs: config.schedules.missed_after_seconds * 1000 })
    : undefined;
  const manager = new ChannelManager({
    runtime,
    threads: new ThreadResolver(new ThreadMapRepo(database.db), runtime, {
      conversations: new ConversationsRepo(database.db),
      isSoleProcess,
    }),
    ...(connections.isEnabled ? { identities: connections } : {}),
    turns: journal,
    channel: (name) => adapters.get(name),
    logger: logger.child({ component: 'manager' }),
    // The agent server's sandbox holds a remote agent's files; none of this server's.
    ...(remoteAgent === undefined ? { sandboxPaths: agent.sandboxPaths } : {}),
    resolveSkill: agent.resolveSkill,
    followUps: new FollowUpsRepo(database.db),
    metrics,
    outbox,
    // A message that meets a database outage waits as long as a reply that meets a platform's.
    databaseWaitMs: config.channels.outbox_deadline_seconds * 1000,
    agents: { availableTo: (userId) => agentCatalog.availableTo(userId), canCreate: config.agents.dir !== undefined },
    defaultAgents: config.channels.default_agents,
    ...(schedules === undefined ? {} : { schedules }),
  });
  const deliveries = new WebhookDeliveriesRepo(database.db);
  const channelState = new ChannelStateRepo(database.db);
  const hostedChats = new HostedChatsRepo(database.db);
  const deps = {
    intake,
    commands: manager.commandInfo(),
    logger,
    now: Date.now,
    agentsDir,
    findUserId: async (idOrName: string) => (await users.findByIdOrName(idOrName))?.id,
  };
  const perPlatform = (name: string) => ({
    deliveries: deliveries.forPlatform(name),
    state: channelState.forPlatform(name),
    hostedChats: hostedChats.forPlatform(name),
    topic: (topic: string) => coordination.topic(name, topic),
    requestWindow: (window: string, perWindow: number, windowMs: number) => coordination.requestWindow(name, window, perWindow, windowMs),
    rateGate: (gate: string) => coordination.rateGate(name, gate),
    intervalBudget: (budget: string, intervalMs: number) => coordination.intervalBudget(name, budget, intervalMs),
    ...(connections.offersBinding(name) ? { binder: connections } : {}),
  });
  for (const adapter of await createEnabledChannels(options, deps, perPlatform)) {
    adapters.set(adapter.name, adapter);
  }
  if (remoteAgent === undefined) warnAboutShellAccess(config, logger, agent.sandboxIsolation);
  else logger.info({ host: remoteAgent.host }, 'the agent runs on the agent server at runtime.url: its shell, files and models are that server\'s');
  bus.start((message, signal, delivery) => manager.handle(message, signal, delivery));
  manager.start();
  // Alone on its database, every turn left unfinished is one a crash of this server interrupted:
  // they run again before new messages come in. Scaled out, the queue hands a dead worker's
  // message to another (a process starting cannot tell a dead process's turn from a live one's).
  if (isSoleProcess) {
    await releaseAbandonedDeliveries(deliveries, logger);
    await manager.resumeUnfinishedTurns(intake);
  }
  // After the resumed turns: an occurrence a crash left in the journal is refused there as taken.
  scheduler?.start();
  outbox.start();
  metricsHistory.start();
  const housekeeping = startHousekeeping(deliveries, outbox, logger);
  // A remote agent's models are its server's: its own /health checks them.
  const modelHealth = new ModelHealth({ models: remoteAgent === undefined ? config.models : [] });

  const app = await buildApp({
    runtime,
    health: (request) =>
      reportHealth(
        database,
        { bus, kind: coordination.kind },
        { runtime, remoteHost: remoteAgent?.host, modelHealth, checkModels: request?.checkModels === true },
        [...adapters.values()].map((a) => [a.name, starter.status(a)]),
        agent,
        outbox,
      ),
    metrics: { render: () => metrics.render(), isPublic: config.server.metrics_public },
    metricsHistory: { intervalSeconds: config.metrics.history_interval_seconds, since: (windowMs) => metricsHistory.since(windowMs) },
    agents: { list: () => listAgentOverviews(agentsDir, join(DEFAULT_AGENTS_DIR, DEFAULT_AGENT_NAME, 'SOUL.md')) },
    logger: logger.child({ component: 'gateway' }),
    skills: agent.skills,
    outbox,
    conversations: new ConversationListRepo(database.db),
    runs: new RunListRepo(database.db),
    ...(schedules === undefined ? {} : { schedules }),
    auth: {
      authenticator: createAuthenticator({ adminToken: config.auth.admin_token, users }),
      // With accounts or an operator token, every route not declared public needs a key; a
      // single-user server without a token stays open (keep it on loopback).
      isPrincipalRequired: connections.isEnabled || config.auth.admin_token !== undefined,
    },
    accounts: { users, connections },
    channelRoutes: [...adapters.values()].flatMap((a) =>
      a.routes ? [{ name: a.name, routes: a.routes, ready: () => starter.firstStartSettled(a.name) }] : [],
    ),
    chatRoutes: adaptersWithChat(adapters).map((a) => ({ name: a.name, routes: a.personRoutes })),
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      logger.info('shutting down');
      // Intake first; egress stays up so in-flight replies still get their final edit. Stopping
      // an adapter also aborts its start if one is under way (a platform that is down holds one
      // for up to 30 s); one whose start won that race is stopped again once the start ended.
      const attemptsEnded = starter.stop();
      modelHealth.close();
      await Promise.allSettled([...adapters.values()].map((a) => a.stop()));
      await attemptsEnded;
      await Promise.allSettled([...adapters.values()].filter((a) => a.status().running).map((a) => a.stop()));
      await starter.releaseLeases();
      await scheduler?.stop();
      await coordination.close();
      clearInterval(housekeeping);
      metricsHistory.stop();
      manager.stop();
      logger.info(await bus.stop(config.channels.shutdown_grace_period_seconds * 1000), 'inbound work settled');
      // After the workers: a final they could not deliver is kept for the next start.
      await outbox.stop();
      await runtime.close();
      // The last conversations' memory updates run now rather than being lost with the process.
      await agent.close(MEMORY_FLUSH_TIMEOUT_MS);
      await app.close();
      await database.close();
    })();
    return stopping;
  };

  let url: string;
  try {
    url = await app.listen({ host: config.server.host, port: config.server.port });
  } catch (error) {
    // The port is taken (or not ours): nothing has reached a platform yet, and nothing may.
    await stop();
    throw error;
  }
  logger.info(
    { url, database: database.kind, bus: coordination.kind, channels: [...adapters.keys()], models: runtime.models().length },
    'server listening',
  );
  logNextSteps(logger, url, { hasChat: adaptersWithChat(adapters).length > 0, hasModel: runtime.models().length > 0 });
  // Only once the port is ours: a server that fails to listen must not have taken a platform's
  // updates first (issue #15). Not awaited: the gateway answers while platforms connect (a
  // platform that is down can take 30 s to say so). The starter retries what failed; /health
  // shows each channel's state.
  void starter.startAll([...adapters.values()]);
  // Likewise the MCP servers: a run waits for a server's first attempt, /health shows each one.
  agent.mcp.start();
  // And the models: /health says `pending` until this first check ends, and is never held by it.
  void modelHealth.check().then((checks) => warnAboutFailingModels(logger, checks));
  return { url, stop };
}

/** The channels people chat through on this server's own pages (the web chat). */
function adaptersWithChat(adapters: Map<string, ChannelAdapter>): (ChannelAdapter & { personRoutes: NonNullable<ChannelAdapter['personRoutes']> })[] {
  return [...adapters.values()].filter((a): a is ChannelAdapter & { personRoutes: NonNullable<ChannelAdapter['personRoutes']> } => a.personRoutes !== undefined);
}

/** The lines after `server listening` a newcomer reads: where to chat, and what is missing for answers. */
function logNextSteps(logger: Logger, url: string, state: { hasChat: boolean; hasModel: boolean }): void {
  if (state.hasChat) logger.info({ chat: `${url}/chat`, console: `${url}/` }, `chat with the agent at ${url}/chat`);
  else logger.info({ console: `${url}/` }, `the console is at ${url}/`);
  if (!state.hasModel) {
    logger.warn('no model is configured, so the agent cannot answer yet: name one under `models:` in config.yaml (docs/configuration.md)');
  }
}

/** One warn line per model whose check failed; `detail` names the route asked and the answer, never the key. */
function warnAboutFailingModels(logger: Logger, checks: ModelChecks): void {
  for (const [name, { status, detail }] of Object.entries(checks)) {
    // `unverified`: reachable with the key accepted; only the model's presence is unknown.
    if (status === 'ok' || status === 'pending' || status === 'unverified') continue;
    logger.warn({ model: name, status, detail }, `model ${name} failed its check (${status}): the server runs, but runs on it may fail; /health shows it`);
  }
}

/** The agent: in this process (the embedded LangGraph runtime), or on the agent server at `runtime.url`. */
async function createAgentRuntime(options: {
  config: Config;
  logger: Logger;
  database: DatabaseHandle;
  agent: AgentServices;
  agentsDir: string;
  isSoleProcess: boolean;
  schedules: ScheduleBook | undefined;
}): Promise<AgentRuntime> {
  const { config, logger, database, agent, agentsDir, isSoleProcess, schedules } = options;
  if (config.runtime.url !== undefined) {
    // Loaded only here: a server running its own agent never pays for the SDK client.
    const { createRemoteRuntime } = await import('./runtime/remote/index.js');
    return createRemoteRuntime({
      url: config.runtime.url,
      ...(config.runtime.api_key === undefined ? {} : { apiKey: config.runtime.api_key }),
      timeoutMs: config.runtime.timeout_seconds * 1000,
      logger,
    });
  }
  return createEmbeddedRuntime({
    db: database.db,
    // Scaled out, a dead process's run frees its thread soon after its message is handed on (the
    // bus lock lasts half the handover). Three quarters, renewed every third: a lease that lapsed
    // then means the process stalled past its bus lock too, so the message is being taken over
    // and a lapsed run may stop (`canBeTakenOver`). Alone, leases only guard restarts.
    ...(isSoleProcess ? {} : { leaseMs: (config.redis.handover_seconds * 1000 * 3) / 4 }),
    models: config.models,
    agentsDir,
    defaultAgentsDir: DEFAULT_AGENTS_DIR,
    logger: logger.child({ component: 'runtime' }),
    isSoleProcess,
    canBeTakenOver: config.redis.url !== undefined,
    maxBackgroundRuns: config.channels.max_background_runs,
    chatModels: agent.chatModels,
    tools: [...agent.sandboxTools, ...agent.webTools],
    bashAccess: config.sandbox.bash_access,
    shellIsolation: { isShellIsolated: agent.sandboxIsolation.kind === 'bubblewrap', isIsolationExplicit: agent.sandboxIsolation.isExplicit },
    promptSources: agent.promptSources,
    memoryStore: agent.memoryStore,
    goals: agent.goals,
    afterRun: agent.afterRun,
    summarization: config.summarization,
    readImage: agent.readImage,
    mcp: agent.mcp,
    subagents: config.subagents,
    // Only a folder the operator named is written to: never the agents shipped with the server.
    ...(config.agents.dir === undefined ? {} : { agentSetupDir: agentsDir }),
    ...(schedules === undefined ? {} : { scheduleTaskTool: createScheduleTaskTool(schedules) }),
  });
}

/**
 * Every agent `channels.default_agents` names has its folder: a typo must stop the start, not
 * fail every message of that chat.
 *
 * @throws ConfigError naming each key whose agent is missing.
 */
async function assertDefaultAgentsExist(defaults: Readonly<Record<string, string>>, agentsDir: string): Promise<void> {
  const missing: string[] = [];
  for (const [key, name] of Object.entries(defaults)) {
    if (name === DEFAULT_AGENT_NAME) continue;
    const isFolder = await stat(join(agentsDir, name)).then((info) => info.isDirectory(), () => false);
    if (!isFolder) missing.push(`channels.default_agents.${key}: no agent "${name}" in the agents folder (${agentsDir})`);
  }
  if (missing.length > 0) throw new ConfigError(missing);
}

/** Says how shells are isolated, and who can reach them. */
function warnAboutShellAccess(config: Config, logger: Logger, isolation: SandboxIsolation): void {
  if (isolation.kind === 'bubblewrap') logger.info({ sandbox: isolation }, 'shell commands run isolated in bubblewrap');
  else if (isolation.isExplicit) logger.warn({ sandbox: isolation }, 'shell commands run unsandboxed, as this server\'s OS user (sandbox.isolation: none)');
  else logger.warn({ sandbox: isolation }, 'bubblewrap is not usable here: shell commands run unsandboxed, as this server\'s OS user');
  const trusted = 'the operator, chat users in allowed_users and users granted the shell';
  if (config.sandbox.bash_access === 'everyone' && isolation.kind === 'none' && !isolation.isExplicit) {
    logger.warn(`sandbox.bash_access is "everyone" but the shell is not isolated: shell commands are limited to ${trusted}`);
  } else if (config.sandbox.bash_access === 'everyone') {
    logger.warn('sandbox.bash_access is "everyone": anyone who can message the bot can run shell commands');
  } else if (config.sandbox.bash_access === 'trusted') {
    logger.info(`shell commands are limited to ${trusted} (sandbox.bash_access: trusted)`);
  }
}

/** What each platform gets of its own: its deliveries, state, binder, request budgets and rate limits. */
type PerPlatformDeps = 'deliveries' | 'state' | 'hostedChats' | 'topic' | 'binder' | 'requestWindow' | 'rateGate' | 'intervalBudget';

/** One adapter per platform whose `channels.<name>` block asks for it, with its own deliveries and binder. */
function createEnabledChannels(
  options: StartServerOptions,
  deps: Omit<ChannelDeps, PerPlatformDeps>,
  perPlatform: (platform: string) => Pick<ChannelDeps, PerPlatformDeps>,
): Promise<ChannelAdapter[]> {
  const enabled = options.platforms.flatMap((platform) => {
    const channelConfig = (options.config.channels as Record<string, unknown>)[platform.name];
    return channelConfig !== undefined && platform.isEnabled(channelConfig) ? [{ platform, channelConfig }] : [];
  });
  return Promise.all(
    enabled.map(({ platform, channelConfig }) =>
      platform.create(channelConfig, { ...deps, ...perPlatform(platform.name), logger: deps.logger.child({ channel: platform.name }) }),
    ),
  );
}

/**
 * Alone on its database, every delivery claim still `processing` is one a crash of this server
 * left mid-way: released, so the platform's redelivery runs instead of being refused as in
 * progress. Never throws: the claims still go stale by themselves.
 */
async function releaseAbandonedDeliveries(deliveries: WebhookDeliveriesRepo, logger: Logger): Promise<void> {
  try {
    const released = await deliveries.releaseAbandoned();
    if (released > 0) logger.warn({ released }, 'deliveries a crash left mid-way released for redelivery');
  } catch (error) {
    logger.warn({ err: describeError(error) }, 'abandoned deliveries could not be released');
  }
}

/** Webhook deliveries stay redeliverable on GitHub for 3 days (7 on Enterprise Server); older records can go. */
const DELIVERY_RETENTION_MS = 8 * 24 * 60 * 60 * 1000;
const HOUSEKEEPING_INTERVAL_MS = 60 * 60 * 1000;

/** Prunes old webhook delivery records and dead letters now and every hour. */
function startHousekeeping(deliveries: WebhookDeliveriesRepo, outbox: Outbox, logger: Logger): NodeJS.Timeout {
  const prune = () => {
    void deliveries
      .prune(new Date(Date.now() - DELIVERY_RETENTION_MS))
      .then((pruned) => pruned > 0 && logger.info({ pruned }, 'old webhook deliveries pruned'))
      .catch((error: unknown) => logger.warn({ err: describeError(error) }, 'pruning webhook deliveries failed'));
    void outbox
      .pruneDeadLetters()
      .then((pruned) => pruned > 0 && logger.info({ pruned }, 'dead letters older than a week pruned'))
      .catch((error: unknown) => logger.warn({ err: describeError(error) }, 'pruning dead letters failed'));
  };
  prune();
  const timer = setInterval(prune, HOUSEKEEPING_INTERVAL_MS);
  timer.unref();
  return timer;
}

async function reportHealth(
  database: DatabaseHandle,
  queue: { bus: InboundBus; kind: HealthReport['bus']['kind'] },
  agentRuntime: { runtime: AgentRuntime; remoteHost: string | undefined; modelHealth: ModelHealth; checkModels: boolean },
  channels: [string, ChannelStatus][],
  agent: Pick<AgentServices, 'sandboxIsolation' | 'mcp'>,
  outbox: Outbox,
): Promise<HealthReport> {
  const sandbox = agent.sandboxIsolation;
  let databaseStatus: HealthReport['database'] = { ok: true, kind: database.kind };
  let busStatus: HealthReport['bus'] = { ok: true, kind: queue.kind };
  let outboxCounts: HealthReport['outbox'];
  const { modelHealth } = agentRuntime;
  let modelChecks = modelHealth.status();
  await Promise.all([
    agentRuntime.checkModels
      ? modelHealth.check().then((checks) => {
          modelChecks = checks;
        })
      : undefined,
    outbox.counts().then(
      (counts) => {
        outboxCounts = counts;
      },
      () => undefined,
    ),
    database.ping().catch((error: unknown) => {
      databaseStatus = { ok: false, kind: database.kind, error: describeError(error).message };
    }),
    queue.bus.ping().catch((error: unknown) => {
      busStatus = { ok: false, kind: queue.kind, error: describeError(error).message };
    }),
  ]);
  const models = agentRuntime.runtime.models().map((m) => m.name);
  const { remoteHost } = agentRuntime;
  return {
    // Without its database or its queue this process can take no message.
    ok: databaseStatus.ok && busStatus.ok,
    database: databaseStatus,
    bus: busStatus,
    channels: Object.fromEntries(channels),
    // A failing model is shown, not counted against `ok`: the server runs without it.
    model: { configured: models.length > 0, models, checks: modelChecks },
    // A remote agent's shell is the agent server's: its own /health tells.
    ...(remoteHost === undefined
      ? { runtime: { kind: 'embedded' as const }, sandbox: { isolation: sandbox.kind, isExplicit: sandbox.isExplicit, ...(sandbox.reason === undefined ? {} : { reason: sandbox.reason }) } }
      : { runtime: { kind: 'remote' as const, host: remoteHost } }),
    ...(outboxCounts === undefined ? {} : { outbox: outboxCounts }),
    ...(agent.mcp.isEmpty ? {} : { mcp: agent.mcp.status() }),
  };
}
