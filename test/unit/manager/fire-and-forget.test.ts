import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryTurnJournal } from '../../../src/channel/turn-journal.js';
import type { ChannelCapabilities, InboundMessage } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import type { BufferedFollowUp } from '../../../src/db/repos/follow-ups-repo.js';
import { ThreadMapRepo } from '../../../src/db/repos/thread-map-repo.js';
import { NotFoundError, ThreadBusyError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { ChannelManager } from '../../../src/manager/channel-manager.js';
import type { FollowUpStore } from '../../../src/manager/follow-ups.js';
import { MESSAGES } from '../../../src/manager/messages.js';
import { ThreadResolver } from '../../../src/manager/threads.js';
import type { RunOptions, RunRequest } from '../../../src/runtime/types.js';
import { openTestDatabase } from '../../helpers/database.js';
import { inboundIn, RecordingEgress, ScriptedRuntime } from './fixtures.js';

describe('fire-and-forget channels', () => {
  /** GitHub's capabilities (`channels/github/index.ts`), restated: core must not import a platform. */
  const FIRE_AND_FORGET: ChannelCapabilities = {
    streaming: 'none',
    maxMessageChars: 65_536,
    hasThreads: true,
    files: { maxInboundBytes: 0, maxOutboundBytes: 0 },
    groupTrigger: 'mention',
    runMode: 'fire_and_forget',
    requiresBoundIdentity: false,
    interactive: false,
    defaultRecursionLimit: 250,
    buffersFollowUps: true,
  };
  const ENVIRONMENT = { secrets: { GH_TOKEN: 'ghs_test' }, variables: { GH_HOST: 'ghe.example.com', GH_PROMPT_DISABLED: '1' } };

  /** Records the sandbox environment of each started run; runs end only when the test says so. */
  class BackgroundRuntime extends ScriptedRuntime {
    readonly runOptions: (Pick<RunOptions, 'sandboxSecrets' | 'sandboxVariables'> | undefined)[] = [];
    private endRuns: () => void = () => undefined;
    private readonly runsEnded = new Promise<void>((resolve) => {
      this.endRuns = resolve;
    });

    override async createRun(threadId: string, request: RunRequest, options?: Pick<RunOptions, 'sandboxSecrets' | 'sandboxVariables'>) {
      const run = await super.createRun(threadId, request);
      this.runOptions.push(options);
      return run;
    }

    /** Waits for {@link finishRuns} (or the watcher's abort), then reports the run gone, which counts as ended. */
    // Optional parameters only: the base class declares none.
    override async joinRun(_threadId?: string, runId?: string, options?: Pick<RunOptions, 'signal'>): Promise<never> {
      await new Promise<void>((resolve) => {
        void this.runsEnded.then(resolve);
        options?.signal?.addEventListener('abort', () => resolve());
      });
      throw new NotFoundError(`run ${runId ?? ''}`);
    }

    finishRuns(): void {
      this.endRuns();
    }
  }

  /** `FollowUpsRepo` in a Map, per thread, oldest first. */
  class MemoryFollowUpStore implements FollowUpStore {
    readonly byThread = new Map<string, BufferedFollowUp[]>();
    private nextId = 1;

    async add(threadId: string, messageKey: string, message: Record<string, unknown>, cap: number) {
      const entries = this.byThread.get(threadId) ?? [];
      if (entries.some((entry) => entry.messageKey === messageKey)) return { added: false, dropped: 0 };
      entries.push({ id: this.nextId++, messageKey, message });
      const dropped = entries.splice(0, Math.max(0, entries.length - cap)).length;
      this.byThread.set(threadId, entries);
      return { added: true, dropped };
    }
    async take(threadId: string, limit: number) {
      const entries = this.byThread.get(threadId) ?? [];
      const taken = entries.splice(0, limit);
      if (entries.length === 0) this.byThread.delete(threadId);
      return taken;
    }
    async putBack(threadId: string, entries: readonly BufferedFollowUp[]) {
      const kept = this.byThread.get(threadId) ?? [];
      const fresh = entries.filter((entry) => !kept.some((other) => other.messageKey === entry.messageKey));
      this.byThread.set(threadId, [...fresh, ...kept].sort((a, b) => a.id - b.id));
    }
    async threads() {
      return [...this.byThread.keys()];
    }
    /** Every buffered message, across threads. */
    get messages(): unknown[] {
      return [...this.byThread.values()].flat().map((entry) => entry.message);
    }
  }

  let database: DatabaseHandle;
  let runtime: BackgroundRuntime;
  let egress: RecordingEgress;
  let store: MemoryFollowUpStore;
  let capabilities: ChannelCapabilities;
  let environments: InboundMessage[];
  let started: InboundMessage[][];
  let chatId: string;
  const managers: ChannelManager[] = [];
  const signal = new AbortController().signal;

  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  beforeEach(() => {
    chatId = `octo-org/${randomUUID()}`;
    runtime = new BackgroundRuntime();
    egress = new RecordingEgress();
    store = new MemoryFollowUpStore();
    capabilities = FIRE_AND_FORGET;
    environments = [];
    started = [];
  });
  afterEach(() => {
    for (const manager of managers.splice(0)) manager.stop();
  });

  function managerWith(options: { followUps?: FollowUpStore; hasHooks?: boolean } = {}): ChannelManager {
    const runHooks = {
      sandboxEnvironment: async (message: InboundMessage) => {
        environments.push(message);
        return ENVIRONMENT;
      },
      runStarted: (messages: readonly InboundMessage[]) => void started.push([...messages]),
    };
    const manager = new ChannelManager({
      runtime,
      threads: new ThreadResolver(new ThreadMapRepo(database.db), runtime),
      turns: new MemoryTurnJournal(),
      channel: (name) => (name === 'fake' ? { egress, capabilities, ...(options.hasHooks === false ? {} : { runHooks }) } : undefined),
      logger: silentLogger(),
      ...(options.followUps === undefined ? {} : { followUps: options.followUps }),
    });
    managers.push(manager);
    return manager;
  }

  /** What an event platform publishes: the owner, the agent and the thread are its own. */
  function event(overrides: Partial<InboundMessage> = {}): InboundMessage {
    return inboundIn(chatId, 'Issue #1: please fix the build', {
      userId: 'Codertocat',
      topicId: '1:coder',
      isPrivateChat: false,
      replyTo: {},
      kind: 'chat',
      ownerUserId: 'owner-7',
      agentName: 'coder',
      senderIsAllowlisted: true,
      preferredThreadId: randomUUID(),
      ...overrides,
    });
  }

  it("starts the run with the channel's sandbox environment, tells the channel, and sends nothing", async () => {
    runtime.scripts.push([]);
    const message = event();
    await managerWith().handle(message, signal);

    expect(runtime.runOptions).toEqual([{ sandboxSecrets: ENVIRONMENT.secrets, sandboxVariables: ENVIRONMENT.variables }]);
    expect(environments).toEqual([message]);
    expect(started).toEqual([[message]]);
    expect(egress.finals).toEqual([]);
    expect(egress.replies.flatMap((reply) => reply.updates)).toEqual([]);
  });

  it('runs with an empty environment when the channel has no run hooks', async () => {
    runtime.scripts.push([]);
    await managerWith({ hasHooks: false }).handle(event(), signal);
    expect(runtime.runOptions).toEqual([{ sandboxSecrets: {}, sandboxVariables: {} }]);
  });

  it("runs as the agent's owner, names the agent, and turns clarification off", async () => {
    runtime.scripts.push([]);
    await managerWith().handle(event(), signal);

    const [call] = runtime.requests;
    expect(call?.request.context).toMatchObject({
      thread_id: call?.threadId,
      channel_name: 'fake',
      user_id: 'owner-7',
      channel_user_id: 'Codertocat',
      trusted_sender: true,
      agent_name: 'coder',
      disable_clarification: true,
    });
    expect(call?.request.input).toEqual({ messages: [{ role: 'human', content: 'Issue #1: please fix the build' }] });
  });

  it.each<[string, number | undefined, number]>([
    ["the channel's default", undefined, 250],
    ["the message's own limit, even below the core default of 100", 40, 40],
    ["the message's own limit above the channel's", 600, 600],
  ])('uses %s as the recursion limit', async (_name, recursionLimit, expected) => {
    runtime.scripts.push([]);
    await managerWith().handle(event(recursionLimit === undefined ? {} : { recursionLimit }), signal);
    expect(runtime.requests[0]?.request.config?.recursion_limit).toBe(expected);
  });

  it('buffers a message that finds its thread busy, says so, and runs it once the thread is free', async () => {
    runtime.scripts.push(new ThreadBusyError('t', 'run-1'));
    const manager = managerWith({ followUps: store });
    const message = event();

    await manager.handle(message, signal);

    expect(store.messages).toEqual([message]);
    expect(egress.finals).toEqual([MESSAGES.threadBusy]);
    expect(started).toEqual([]);

    // Once the busy run ends, the buffered message runs as one follow-up turn, with the channel's environment.
    runtime.finishRuns();
    await vi.waitFor(() => expect(started).toHaveLength(1));
    expect(started[0]).toEqual([message]);
    expect(runtime.requests[1]?.request.input?.messages[0]?.content).toContain('please fix the build');
    expect(runtime.runOptions.at(-1)).toEqual({ sandboxSecrets: ENVIRONMENT.secrets, sandboxVariables: ENVIRONMENT.variables });
    expect(store.messages).toEqual([]);
  });

  it.each<[string, Partial<ChannelCapabilities>, boolean]>([
    ['a channel that does not buffer follow-ups', { buffersFollowUps: false }, true],
    ['a manager without a follow-up store', {}, false],
  ])('answers busy and lets a redelivery run on %s', async (_name, change, hasStore) => {
    capabilities = { ...FIRE_AND_FORGET, ...change };
    runtime.scripts.push(new ThreadBusyError('t', 'run-1'), []);
    const manager = managerWith(hasStore ? { followUps: store } : {});
    const message = event();

    await manager.handle(message, signal);
    expect(egress.finals).toEqual([MESSAGES.threadBusy]);
    expect(store.messages).toEqual([]);

    await manager.handle({ ...message }, signal);
    expect(runtime.requests).toHaveLength(2);
    expect(started).toEqual([[message]]);
    expect(egress.finals).toEqual([MESSAGES.threadBusy]);
  });
});
