/**
 * One layer of the `layers` bench in a process of its own (so one layer's JIT and heap do not
 * colour the next): `tsx test/bench/layer-worker.ts '<LayerSpec as JSON>'`. It warms up, answers
 * one chat's messages in a row (latency), then every chat at once with `concurrency` answers in
 * flight (CPU per message), optionally one long conversation, and prints `result <JSON>`. It then
 * stays idle until it is stopped, so the parent reads the line before the process ends.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AIMessageChunk, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { Api } from 'grammy';
import pLimit from 'p-limit';
import { v7 as uuidv7 } from 'uuid';
import { LeadAgent, type TurnContext } from '../../src/agent/lead-agent.js';
import { createChatModel } from '../../src/agent/models.js';
import { loadAgentSoul } from '../../src/agent/prompt.js';
import { createAgentServices } from '../../src/agent/services.js';
import { parseConfig } from '../../src/config/index.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/index.js';
import { SqlTurnJournal } from '../../src/db/repos/turn-journal-repo.js';
import { silentLogger } from '../../src/logger.js';
import { DrizzleCheckpointSaver } from '../../src/runtime/embedded/checkpointer.js';
import { createEmbeddedRuntime } from '../../src/runtime/embedded/index.js';
import { RunStore } from '../../src/runtime/embedded/run-store.js';
import type { RunRequest } from '../../src/runtime/types.js';
import { ownCpuMs, PostgresCpuMeter } from './cpu-time.js';
import { answerTo } from './final-watcher.js';
import { statementCounts } from './pglite-statements.js';
import { ROOT } from './server-process.js';
import { statementsPerMessage } from './statement-counts.js';

/**
 * The in-process layers, floor first; the whole server (L4) is measured by the parent.
 * `graph-duties` is L2 with the work every message owes besides the graph (see {@link withTurnDuties}).
 */
export type LayerName = 'model' | 'graph-memory' | 'graph-saver' | 'graph-duties' | 'runtime';

export interface LayerSpec {
  layer: LayerName;
  /** Where checkpoints and runs live; absent for the layers that need no database of their own. */
  database?: { kind: 'pglite' } | { kind: 'postgres'; url: string; name: string };
  modelBaseUrl: string;
  chats: number;
  messagesPerChat: number;
  /** Answers in flight at once, as the manager's `channels.max_concurrency` workers. */
  concurrency: number;
  /** Turns of the long conversation; 0 = none. */
  longTurns: number;
  /** The model's `context_window`: long conversations are summarised to fit it (the `context` bench). */
  contextWindow?: number;
  /** When set, a V8 CPU profile of the "all chats at once" phase alone is written here (`.cpuprofile`). */
  cpuProfilePath?: string;
  /** `graph-duties`: the fake Bot API the placeholder and the final go to, and a chat a person wrote in there. */
  telegram?: { apiRoot: string; token: string; chatId: number };
}

export interface LayerResult {
  cpuMsPerMessage: number;
  /** PostgreSQL backends' CPU per message, when the layer ran on PostgreSQL. */
  postgresCpuMsPerMessage?: number;
  /** Statements sent to PGlite per message, when the layer ran on PGlite. */
  queriesPerMessage?: number;
  /** The same by statement text (see pglite-statements.ts). */
  statementsPerMessage?: Record<string, number>;
  /** L4: the Bot API calls the server made per message, by method (the fake Telegram's record). */
  platformCallsPerMessage?: Record<string, number>;
  /** One chat alone, messages in a row. */
  aloneLatenciesMs: number[];
  concurrentPerSecond: number;
  /** Per turn of the long conversation, in order. */
  long?: { cpuMs: number[]; latencyMs: number[] };
}

type Answer = (chat: number, text: string) => Promise<void>;

const AGENTS_DIR = join(ROOT, 'agents');
const SKILLS_DIR = join(ROOT, 'skills');
/** A stranger on Telegram (the bench's `allowed_users` is empty): no bash, may be asked a question. */
const ACCESS = { bash: false, clarification: true };

const spec = JSON.parse(process.argv[2] ?? '{}') as LayerSpec;
const dataDir = mkdtempSync(join(tmpdir(), 'dfc-layer-'));
const config = parseConfig(
  {
    data_dir: dataDir,
    models: [
      {
        name: 'default',
        model: 'gpt-4o-mini',
        base_url: spec.modelBaseUrl,
        api_key: 'sk-bench',
        max_retries: 0,
        ...(spec.contextWindow === undefined ? {} : { context_window: spec.contextWindow }),
      },
    ],
  },
  {},
  [],
);
const modelConfig = config.models[0] as (typeof config.models)[number];
const logger = silentLogger();

async function openLayerDatabase(): Promise<DatabaseHandle> {
  const { database } = spec;
  if (database?.kind === 'postgres') return openDatabase({ url: database.url });
  // The model layer has no database; the in-memory saver layer needs one only for the skill list.
  return openDatabase({ dataDir });
}

async function openLayer(): Promise<Answer> {
  if (spec.layer === 'model') return bareModel();
  const database = await openLayerDatabase();
  const services = await createAgentServices({
    config,
    db: database.db,
    dataDir,
    skillsDir: SKILLS_DIR,
    environment: { PATH: process.env.PATH },
    logger,
    // As the server decides it: alone on its database (PGlite), it keeps the memory it reads.
    isSoleProcess: database.kind === 'pglite',
  });
  if (spec.layer === 'runtime') {
    const runtime = await createEmbeddedRuntime({
      db: database.db,
      models: config.models,
      agentsDir: AGENTS_DIR,
      logger,
      isSoleProcess: database.kind === 'pglite',
      chatModels: services.chatModels,
      tools: [...services.sandboxTools, ...services.webTools],
      bashAccess: config.sandbox.bash_access,
      shellIsolation: { isShellIsolated: services.sandboxIsolation.kind === 'bubblewrap', isIsolationExplicit: services.sandboxIsolation.isExplicit },
      promptSources: services.promptSources,
      memoryStore: services.memoryStore,
      goals: services.goals,
      afterRun: services.afterRun,
      summarization: config.summarization,
    });
    const threads = new Map<number, string>();
    return async (chat, text) => {
      let threadId = threads.get(chat);
      if (threadId === undefined) {
        threadId = (await runtime.createThread()).thread_id;
        threads.set(chat, threadId);
      }
      const { events } = await runtime.streamRun(threadId, requestAsTheManagerSends(chat, threadId, text));
      for await (const _ of events);
    };
  }
  const agent = new LeadAgent({
    soul: await loadAgentSoul(AGENTS_DIR, 'lead'),
    chatModels: services.chatModels,
    checkpointer: spec.layer === 'graph-memory' ? new MemorySaver() : new DrizzleCheckpointSaver(database.db),
    tools: [...services.sandboxTools, ...services.webTools],
    sources: services.promptSources,
    logger,
  });
  const graph = agent.graph(modelConfig, ACCESS);
  if (spec.layer === 'graph-duties') return withTurnDuties(graphAnswer(agent, graph), database);
  return graphAnswer(agent, graph);
}

/** The graph as the runtime calls it, with our checkpointer or LangGraph's in-memory saver. */
function graphAnswer(agent: LeadAgent, graph: ReturnType<LeadAgent['graph']>): Answer {
  // The prompt sections are loaded once per chat: this layer is the graph, not the runtime around it.
  const turns = new Map<number, TurnContext>();
  return async (chat, text) => {
    let turn = turns.get(chat);
    if (turn === undefined) {
      turn = await agent.prepareTurn({ memoryOwner: `telegram_${chat}`, access: ACCESS, messageText: text });
      turns.set(chat, turn);
    }
    // As the runtime calls it (src/runtime/embedded/index.ts).
    const stream = await graph.stream(
      { messages: [new HumanMessage({ content: text, additional_kwargs: {} })] },
      {
        configurable: { ...LeadAgent.configurableFor(turn), thread_id: `chat-${chat}`, user_id: `telegram_${chat}`, checkpoint_ns: '' },
        recursionLimit: 100,
        streamMode: ['values', 'messages'],
        durability: 'exit',
      },
    );
    for await (const _ of stream);
  };
}

/**
 * L2 with what the server owes every message besides the graph, done as the server does it and
 * nothing more: the turn journal's claim and finish (a redelivery runs once, a crash loses
 * nothing), the run's admission and end (one run per thread, and its record), and Telegram's two
 * Bot API calls through grammY (the placeholder, then the final edit in its place). The floor under
 * a server that keeps those promises; the rest of L4 over it is the manager, the renderer, the
 * long poll and logs.
 */
async function withTurnDuties(answer: Answer, database: DatabaseHandle): Promise<Answer> {
  const telegram = spec.telegram;
  if (telegram === undefined) throw new Error('graph-duties needs spec.telegram');
  const journal = new SqlTurnJournal(database.db);
  const runs = new RunStore(database.db, 60_000);
  const api = new Api(telegram.token, { apiRoot: telegram.apiRoot });
  const threads = new Map<number, string>();
  let updateId = 0;
  return async (chat, text) => {
    let threadId = threads.get(chat);
    if (threadId === undefined) {
      threadId = randomUUID();
      await runs.createThread(threadId, {}, 'do_nothing');
      threads.set(chat, threadId);
    }
    const messageId = String(++updateId);
    const placeholder = await api.sendMessage(telegram.chatId, 'Working on it...');
    const key = { channel: 'telegram', workspaceId: '', chatId: String(chat), messageId };
    await journal.accept(key, {
      kind: 'chat',
      channel: 'telegram',
      chatId: String(chat),
      userId: String(chat),
      text,
      isPrivateChat: true,
      messageId,
      replyTo: { messageId, placeholderId: String(placeholder.message_id) },
      receivedAt: Date.now(),
    });
    const run = await runs.admitRun({ id: uuidv7(), threadId, assistantId: 'lead_agent', metadata: {}, kwargs: { config: {}, context: {}, stream_mode: [] } });
    await answer(chat, text);
    await runs.finishRunUnlessGoal({ id: run.id, threadId }, { status: 'success' });
    await api.editMessageText(telegram.chatId, placeholder.message_id, answerTo(text));
    await journal.finish(key);
  };
}

/** `ChatOpenAI` as the server configures it, streaming the chat's history and keeping the answer. */
function bareModel(): Answer {
  const model = createChatModel(modelConfig);
  const histories = new Map<number, BaseMessage[]>();
  return async (chat, text) => {
    const history = histories.get(chat) ?? [];
    histories.set(chat, history);
    history.push(new HumanMessage(text));
    let answer: AIMessageChunk | undefined;
    for await (const chunk of await model.stream(history)) answer = answer === undefined ? chunk : answer.concat(chunk);
    if (answer) history.push(answer);
  };
}

/** The run request `ChannelManager.runRequest` builds for a Telegram private chat. */
function requestAsTheManagerSends(chat: number, threadId: string, text: string): RunRequest {
  return {
    assistant_id: 'lead_agent',
    input: { messages: [{ role: 'human', content: text }] },
    multitask_strategy: 'reject',
    config: { recursion_limit: 100 },
    context: { thread_id: threadId, channel_name: 'telegram', user_id: `telegram_${chat}`, channel_user_id: String(chat), trusted_sender: false },
    stream_mode: ['messages-tuple', 'values'],
  };
}

/** The inspector's sampling profiler, started: only the measured phase lands in the profile. */
async function startProfiler(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return session;
}

async function timed(answer: Answer, chat: number, text: string): Promise<number> {
  const startedAt = performance.now();
  await answer(chat, text);
  return performance.now() - startedAt;
}

async function measure(answer: Answer): Promise<LayerResult> {
  // Warm-up: JIT, connections, the first threads.
  await Promise.all(Array.from({ length: Math.min(spec.chats, 5) }, async (_, c) => {
    for (let m = 0; m < 2; m++) await answer(1_000_000 + c, `q ${1_000_000 + c}-${m}`);
  }));
  const aloneLatenciesMs: number[] = [];
  for (let m = 0; m < spec.messagesPerChat; m++) aloneLatenciesMs.push(await timed(answer, 500_000, `q 500000-${m}`));

  const { database } = spec;
  const postgresMeter = database?.kind === 'postgres' ? new PostgresCpuMeter(database.url, database.name) : undefined;
  await postgresMeter?.start();
  const limit = pLimit(spec.concurrency);
  const profiler = spec.cpuProfilePath === undefined ? undefined : await startProfiler();
  const statementsBefore = statementCounts();
  const cpuBefore = ownCpuMs();
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: spec.chats }, async (_, c) => {
    for (let m = 0; m < spec.messagesPerChat; m++) await limit(() => answer(1 + c, `q ${1 + c}-${m}`));
  }));
  const wallMs = performance.now() - startedAt;
  const total = spec.chats * spec.messagesPerChat;
  const cpuMsPerMessage = (ownCpuMs() - cpuBefore) / total;
  if (profiler !== undefined && spec.cpuProfilePath !== undefined) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(spec.cpuProfilePath, JSON.stringify(profile));
    profiler.disconnect();
  }
  const postgresCpuMs = await postgresMeter?.stop();

  const result: LayerResult = { cpuMsPerMessage, aloneLatenciesMs, concurrentPerSecond: (total / wallMs) * 1000 };
  if (postgresCpuMs !== undefined) result.postgresCpuMsPerMessage = postgresCpuMs / total;
  if (database?.kind === 'pglite') {
    result.statementsPerMessage = statementsPerMessage(statementsBefore, statementCounts(), total);
    result.queriesPerMessage = Object.values(result.statementsPerMessage).reduce((sum, n) => sum + n, 0);
  }
  if (spec.longTurns > 0) {
    const long = { cpuMs: [] as number[], latencyMs: [] as number[] };
    for (let turn = 0; turn < spec.longTurns; turn++) {
      const cpuAt = ownCpuMs();
      long.latencyMs.push(await timed(answer, 3_000_000, `q 3000000-${turn}`));
      long.cpuMs.push(ownCpuMs() - cpuAt);
    }
    result.long = long;
  }
  return result;
}

// Exit on SIGTERM (instead of dying of it), so `--cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));
try {
  const result = await measure(await openLayer());
  process.stdout.write(`result ${JSON.stringify(result)}\n`);
  // Idle until the parent stops this process: exiting now could beat the line to the parent.
  setInterval(() => {}, 1 << 30);
} catch (error) {
  process.stderr.write(`layer ${spec.layer} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
