import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, } from 'vitest';
import { memoryOwnerOf } from '../../../src/agent/memory/owner.js';
import { SandboxPaths } from '../../../src/agent/sandbox/paths.js';
import type { SlashSkillResolution } from '../../../src/agent/skills/index.js';
import { JournaledIntake } from '../../../src/channel/journaled-intake.js';
import { type DedupeKey, dedupeKeyOf, MemoryTurnJournal } from '../../../src/channel/turn-journal.js';
import type { ChannelCapabilities, ChannelFiles, InboundMessage, OutboundFile, } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { ThreadMapRepo } from '../../../src/db/repos/thread-map-repo.js';
import { AgentError, AppError, ChannelError, ThreadBusyError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { ChannelManager, type ChannelManagerDeps, type IdentityBinding, type IdentityGate } from '../../../src/manager/channel-manager.js';
import { MESSAGES } from '../../../src/manager/messages.js';
import { ThreadResolver } from '../../../src/manager/threads.js';
import { safeUserId } from '../../../src/manager/user-id.js';
import type {
  RunRequest,
  StreamPart,
} from '../../../src/runtime/types.js';
import { openTestDatabase } from '../../helpers/database.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { chunk, inboundIn, RecordingEgress, ScriptedRuntime, STREAMING, values } from './fixtures.js';

describe('ChannelManager', () => {
  let database: DatabaseHandle;
  let runtime: ScriptedRuntime;
  let egress: RecordingEgress;
  let manager: ChannelManager;
  let now: number;
  let chatId: string;
  let capabilities: ChannelCapabilities;
  const signal = new AbortController().signal;
  const inbound = (text: string, overrides: Partial<InboundMessage> = {}) => inboundIn(chatId, text, overrides);

  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database.close();
  });

  beforeEach(() => {
    // A fresh chat per test keeps tests independent on one shared database.
    chatId = randomUUID();
    runtime = new ScriptedRuntime();
    egress = new RecordingEgress();
    now = 0;
    capabilities = STREAMING;
    manager = managerWith();
  });

  /** A manager over this test's runtime, egress and clock, with `extra` deps. */
  function managerWith(extra: Partial<ChannelManagerDeps> = {}): ChannelManager {
    return new ChannelManager({
      runtime,
      threads: new ThreadResolver(new ThreadMapRepo(database.db), runtime),
      turns: new MemoryTurnJournal(),
      channel: (name) => (name === 'fake' ? { egress, capabilities } : undefined),
      logger: silentLogger(),
      now: () => now,
      ...extra,
    });
  }
  describe('streaming chat', () => {
    it('shows the first text at once with a cursor, then exactly one final without it', async () => {
      runtime.scripts.push([chunk('Hello'), chunk(' there'), values('Hello there, friend.')]);
      await manager.handle(inbound('hi'), signal);
      const [reply] = egress.replies;
      expect(reply?.updates[0]).toBe(`Hello${MESSAGES.streamingCursor}`);
      expect(reply?.finals).toEqual(['Hello there, friend.']);
    });

    it('sends the user text as the run input with the reject strategy and identity context', async () => {
      runtime.scripts.push([values('ok')]);
      await manager.handle(inbound('what is up?'), signal);
      const request = runtime.requests[0]?.request as RunRequest;
      expect(request.input).toEqual({ messages: [{ role: 'human', content: 'what is up?' }] });
      expect(request.multitask_strategy).toBe('reject');
      expect(request.context).toMatchObject({ channel_name: 'fake', channel_user_id: 'user 1' });
      expect(request.context?.user_id).toMatch(/^user-1-[0-9a-f]{16}$/);
    });

    it('keeps one thread per conversation and a new one per topic', async () => {
      runtime.scripts.push([values('a')], [values('b')], [values('c')]);
      await manager.handle(inbound('one'), signal);
      await manager.handle(inbound('two'), signal);
      await manager.handle(inbound('three', { topicId: 't2' }), signal);
      const threadIds = runtime.requests.map((r) => r.threadId);
      expect(threadIds[0]).toBe(threadIds[1]);
      expect(threadIds[2]).not.toBe(threadIds[0]);
    });

    it('creates exactly one thread for concurrent first messages of a conversation', async () => {
      runtime.createThreadDelayMs = 20;
      runtime.scripts.push([values('a')], [values('b')], [values('c')]);
      await Promise.all([manager.handle(inbound('1'), signal), manager.handle(inbound('2'), signal), manager.handle(inbound('3'), signal)]);
      expect(runtime.threads).toHaveLength(1);
      expect(new Set(runtime.requests.map((r) => r.threadId)).size).toBe(1);
    });

    describe('a message two processes held (scaled out, one stalled past the handover)', () => {
      /** A manager over a journal of its own that holds `text`'s message as accepted. */
      async function journaled(text: string) {
        const turns = new MemoryTurnJournal();
        const message = inbound(text);
        const key = dedupeKeyOf(message) as DedupeKey;
        await turns.accept(key, message);
        return { manager: managerWith({ turns }), turns, message, key };
      }

      /** Nothing more was sent, and the turn is neither finished nor released: the other process owns it. */
      async function expectLeftToTheOther({ turns, message, key }: Awaited<ReturnType<typeof journaled>>) {
        const [reply] = egress.replies;
        expect(reply?.finals).toEqual([]);
        expect(reply?.isAbandoned).toBe(true);
        expect(await turns.hasFinished(key)).toBe(false);
        expect(await turns.accept(key, message)).toBe(false);
      }

      it('runs nothing for a message taken over from a stalled worker that answered it meanwhile', async () => {
        const { manager: taker, turns, message, key } = await journaled('answered already?');
        await turns.finish(key);
        runtime.scripts.push([values('a second answer')]);
        await taker.handle(message, signal, { redelivered: true });
        expect(runtime.requests).toEqual([]);
        expect(egress.replies.flatMap((reply) => [...reply.updates, ...reply.finals])).toEqual([]);
      });

      it('answers a message taken over from a worker that died before it answered', async () => {
        const { manager: taker, turns, message, key } = await journaled('still open');
        runtime.scripts.push([values('answered by the taker')]);
        await taker.handle(message, signal, { redelivered: true });
        expect(egress.finals).toEqual(['answered by the taker']);
        expect(await turns.hasFinished(key)).toBe(true);
      });

      it('says nothing more and leaves the turn to the process that took its run over', async () => {
        const held = await journaled('mine or yours?');
        runtime.scripts.push([chunk('half an'), { event: 'error', data: { error: 'RUN_TAKEN_OVER' } }]);
        await held.manager.handle(held.message, signal);
        await expectLeftToTheOther(held);
      });

      it('sends no final once the bus says another process holds the message, and leaves the turn to it', async () => {
        const held = await journaled('who answers?');
        runtime.scripts.push([chunk('an answer'), values('an answer, whole')]);
        await held.manager.handle(held.message, signal, { redelivered: false, isStillHeld: async () => false });
        await expectLeftToTheOther(held);
      });
    });

    it('shows the busy text and lets a redelivery retry when the thread is busy', async () => {
      runtime.scripts.push(new ThreadBusyError('t'), [values('done')]);
      const message = inbound('hello');
      await manager.handle(message, signal);
      expect(egress.finals).toEqual([MESSAGES.threadBusy]);
      await manager.handle(message, signal);
      expect(egress.finals).toEqual([MESSAGES.threadBusy, 'done']);
      // Platforms that mark the user's message with the result (Slack's ✅ / ❌) learn it here.
      expect(egress.outcomes).toEqual([true, false]);
    });

    it('counts accepted messages, and replies by outcome with their time since receipt', async () => {
      const counted: string[] = [];
      const metered = managerWith({
        metrics: {
          accepted: (channel) => void counted.push(`accepted ${channel}`),
          duplicate: (channel) => void counted.push(`duplicate ${channel}`),
          answered: (channel, outcome, seconds) => void counted.push(`${outcome} ${channel} ${seconds}`),
        },
      });
      runtime.scripts.push([values('done')], [{ event: 'error', data: { error: 'MODEL_FAILED' } }]);
      now = 2500;
      const message = inbound('hello', { receivedAt: 1000 });
      await metered.handle(message, signal);
      await metered.handle(inbound('again', { receivedAt: 2000 }), signal);
      expect(counted).toEqual(['accepted fake', 'ok fake 1.5', 'accepted fake', 'failed fake 0.5']);
    });

    it("tells the egress when the final is the agent's question, and only then", async () => {
      const question = {
        event: 'values',
        data: {
          messages: [
            { type: 'human', content: 'deploy it' },
            { type: 'ai', content: '', tool_calls: [{ name: 'ask_clarification' }] },
            { type: 'tool', name: 'ask_clarification', content: 'Staging or production?' },
          ],
        },
      } satisfies StreamPart;
      runtime.scripts.push([question], [values('Deployed to staging.')]);
      await manager.handle(inbound('deploy it'), signal);
      await manager.handle(inbound('staging'), signal);
      expect(egress.finals).toEqual(['Staging or production?', 'Deployed to staging.']);
      expect(egress.replies.flatMap((r) => r.awaitsAnswer)).toEqual([true, false]);
    });

    it('hands the message platformData to the egress with the reply target', async () => {
      runtime.scripts.push([values('ok')]);
      await manager.handle(inbound('hello', { platformData: { sourcePreview: 'hello' } }), signal);
      expect(egress.replies[0]?.target.platformData).toEqual({ sourcePreview: 'hello' });
    });

    it('ends a failed run with the error text, keeps streamed text marked as cut off, and releases the dedupe key', async () => {
      runtime.scripts.push([{ event: 'error', data: { error: 'MODEL_FAILED' } }]);
      const message = inbound('hello');
      await manager.handle(message, signal);
      expect(egress.finals).toEqual([MESSAGES.streamError]);
      expect(egress.outcomes).toEqual([true]);
      runtime.scripts.push([chunk('Partial answer'), { event: 'error', data: {} }]);
      await manager.handle(message, signal);
      expect(egress.finals[1]).toBe(MESSAGES.cutOff('Partial answer'));
      expect(egress.finals[1]).toBe('Partial answer\n\n(This answer was cut off: the model stopped before it finished. Please ask again.)');
    });

    it('says so when no model is configured', async () => {
      runtime.scripts.push(new AgentError('MODEL_NOT_CONFIGURED', 'none', { userMessage: 'No model is configured.' }));
      await manager.handle(inbound('hello'), signal);
      expect(egress.finals).toEqual(['No model is configured.']);
    });

    it('falls back to the empty-reply text when the agent said nothing', async () => {
      runtime.scripts.push([{ event: 'values', data: { messages: [{ type: 'human', content: 'q' }] } }]);
      await manager.handle(inbound('hello'), signal);
      expect(egress.finals).toEqual([MESSAGES.emptyReply]);
    });

    it('answers an empty message without running the agent', async () => {
      await manager.handle(inbound('   '), signal);
      expect(egress.finals).toEqual([MESSAGES.emptyMessage]);
      expect(runtime.requests).toHaveLength(0);
    });

    it('replies with the internal-error text when something unexpected breaks, and a redelivery retries', async () => {
      runtime.scripts.push(new Error('database exploded'), [values('recovered')]);
      const message = inbound('hello');
      await manager.handle(message, signal);
      expect(egress.finals).toEqual([MESSAGES.internalError]);
      await manager.handle(message, signal);
      expect(egress.finals).toEqual([MESSAGES.internalError, 'recovered']);
    });
  });

  describe('turns a crash left unfinished (issue #15)', () => {
    /** A journal as a crashed process left it: `interrupted` accepted (by the dead worker), never finished. */
    async function crashedWith(...interrupted: InboundMessage[]): Promise<{ journal: MemoryTurnJournal; intake: RecordingIntake; restarted: ChannelManager }> {
      const journal = new MemoryTurnJournal({ now: () => now });
      for (const message of interrupted) await journal.accept(dedupeKeyOf(message) as DedupeKey, message);
      return { journal, intake: new RecordingIntake(), restarted: managerWith({ turns: journal }) };
    }

    it('runs an interrupted turn once more into the reply it had, then never again', async () => {
      const message = inbound('hello', { replyTo: { messageId: 'm1', placeholderId: 'working-1' } });
      const { journal, intake, restarted } = await crashedWith(message);
      await restarted.resumeUnfinishedTurns(intake);
      expect(intake.committed).toEqual([{ ...message, resumes: 1 }]);

      runtime.scripts.push([values('Answered after the restart.')]);
      await restarted.handle(intake.committed[0] as InboundMessage, signal);
      expect(egress.finals).toEqual(['Answered after the restart.']);
      expect(egress.replies[0]?.target.replyTo).toEqual({ messageId: 'm1', placeholderId: 'working-1' });
      // Finished: a later start finds nothing, and the platform's redelivery is still a duplicate.
      expect(await journal.resumeUnfinished()).toEqual([]);
      const ingress = new JournaledIntake({ intake, journal, logger: silentLogger() });
      await expect((await ingress.reserve()).commit(message)).rejects.toMatchObject({ code: 'DUPLICATE_DELIVERY' });
    });

    it('tells instead of running a turn that was taken up once already (it may be what crashed the server)', async () => {
      const { journal, intake, restarted } = await crashedWith(inbound('crashed the server twice'));
      await journal.resumeUnfinished(); // the first restart took it up
      await restarted.resumeUnfinishedTurns(intake);
      expect(intake.committed).toEqual([]);
      expect(egress.finals).toEqual([MESSAGES.interruptedByRestart]);
      expect(egress.outcomes).toEqual([true]);
      expect(await journal.resumeUnfinished()).toEqual([]);
    });

    it('tells instead of running a turn accepted over 15 minutes ago', async () => {
      const { journal, intake, restarted } = await crashedWith(inbound('asked long ago'));
      now += 15 * 60_000 + 1;
      await restarted.resumeUnfinishedTurns(intake);
      expect(intake.committed).toEqual([]);
      expect(egress.finals).toEqual([MESSAGES.interruptedByRestart]);
      expect(await journal.resumeUnfinished()).toEqual([]);
    });

    it('tells the person when the intake cannot take the turn', async () => {
      const { intake, restarted } = await crashedWith(inbound('hello'));
      intake.isFull = true;
      await restarted.resumeUnfinishedTurns(intake);
      expect(egress.finals).toEqual([MESSAGES.interruptedByRestart]);
    });

    it('finishes the turn of an answered message, so nothing is taken up again', async () => {
      const journal = new MemoryTurnJournal();
      const running = managerWith({ turns: journal });
      runtime.scripts.push([values('ok')]);
      await running.handle(inbound('hello'), signal);
      expect(await journal.resumeUnfinished()).toEqual([]);
    });
  });

  describe('other run modes', () => {
    it('wait: shows nothing until the run ends, then one final', async () => {
      capabilities = { ...STREAMING, streaming: 'none', runMode: 'wait' };
      runtime.scripts.push([chunk('partial that must not show'), values('The whole answer.')]);
      await manager.handle(inbound('hi'), signal);
      expect(egress.replies[0]?.updates).toEqual([]);
      expect(egress.finals).toEqual(['The whole answer.']);
    });

    it('wait: a busy thread gets the busy text, a failed run the error text', async () => {
      capabilities = { ...STREAMING, streaming: 'none', runMode: 'wait' };
      runtime.scripts.push(new ThreadBusyError('t'), new AgentError('MODEL_FAILED', 'boom'));
      await manager.handle(inbound('one'), signal);
      await manager.handle(inbound('two'), signal);
      expect(egress.finals).toEqual([MESSAGES.threadBusy, MESSAGES.streamError]);
    });

    it('fire and forget: starts the run and says nothing on success, the busy text when busy', async () => {
      capabilities = { ...STREAMING, streaming: 'none', runMode: 'fire_and_forget' };
      runtime.scripts.push([], new ThreadBusyError('t'));
      await manager.handle(inbound('one'), signal);
      expect(runtime.requests).toHaveLength(1);
      expect(egress.finals).toEqual([]);
      await manager.handle(inbound('two'), signal);
      expect(egress.finals).toEqual([MESSAGES.threadBusy]);
    });
  });

  describe('commands', () => {
    it('/help lists exactly the commands that exist', async () => {
      await manager.handle(inbound('/help'), signal);
      expect(egress.finals).toEqual([
        [
          'Available commands:',
          '/bootstrap — Start a bootstrap session (enables agent setup)',
          '/goal [condition|clear] — Set, show, or clear an active goal',
          '/schedule <when> <task> | list | cancel <id> — Run a task on a schedule and post the result here',
          '/new — Start a new conversation',
          '/status — Show current thread info',
          '/agent [name] — List the agents you can talk to, or switch to one',
          '/models — List available models',
          '/memory [clear] — Show memory status',
          '/<skill-name> <task> — Activate an enabled skill for one turn',
          '/help — Show this help',
        ].join('\n'),
      ]);
    });

    it('/status reports no conversation, then the thread the chat uses', async () => {
      await manager.handle(inbound('/status'), signal);
      runtime.scripts.push([values('hi')]);
      await manager.handle(inbound('hello'), signal);
      await manager.handle(inbound('/status'), signal);
      expect(egress.finals[0]).toBe('No active conversation.');
      expect(egress.finals[2]).toBe(`Active thread: ${runtime.requests[0]?.threadId}`);
    });

    it('/new starts a fresh thread that the next message uses', async () => {
      runtime.scripts.push([values('a')], [values('b')]);
      await manager.handle(inbound('first'), signal);
      await manager.handle(inbound('/new'), signal);
      await manager.handle(inbound('second'), signal);
      expect(egress.finals[1]).toBe('New conversation started.');
      const [first, second] = runtime.requests.map((r) => r.threadId);
      expect(second).not.toBe(first);
      expect(second).toBe(runtime.threads[1]);
    });

    it('/models lists the configured models, says which think and which see images, or says there are none', async () => {
      runtime.modelNames = ['default', 'fast', 'qwen3', 'qvl'];
      runtime.modelThinking = { qwen3: 'off', qvl: 'on' };
      runtime.modelVision = new Set(['fast', 'qvl']);
      await manager.handle(inbound('/models'), signal);
      runtime.modelNames = [];
      await manager.handle(inbound('/models'), signal);
      expect(egress.finals).toEqual([
        'Available models:\n• default\n• fast (sees images)\n• qwen3 (thinking off)\n• qvl (thinking on, sees images)',
        'No models configured.',
      ]);
    });

    it.each([
      ['/frobnicate', 'Unknown command: /frobnicate. Available commands: /agent | /bootstrap | /goal | /help | /memory | /models | /new | /schedule | /status'],
      ['//help', 'Unknown command: //help. Available commands: /agent | /bootstrap | /goal | /help | /memory | /models | /new | /schedule | /status'],
      [' /new', 'Unknown command: /new. Available commands: /agent | /bootstrap | /goal | /help | /memory | /models | /new | /schedule | /status'],
    ])('%j gets the unknown-command reply', async (text, expected) => {
      await manager.handle(inbound(text, { kind: 'command' }), signal);
      expect(egress.finals).toEqual([expected]);
    });
  });

  describe('/agent and /bootstrap', () => {
    const agents = (canCreate = true) => ({
      canCreate,
      availableTo: async () => [
        { name: 'sql', description: 'Reviews SQL' },
        { name: 'support', description: 'Answers product questions' },
      ],
    });
    const contextOf = (i: number) => runtime.requests[i]?.request.context ?? {};

    it('lists the agents, switches to one in a new conversation that keeps it across /new, and refuses one not offered', async () => {
      manager = managerWith({ agents: agents() });
      runtime.scripts.push([values('a')], [values('b')], [values('c')]);
      await manager.handle(inbound('hello'), signal);
      await manager.handle(inbound('/agent'), signal);
      await manager.handle(inbound('/agent Support'), signal);
      await manager.handle(inbound('hello support'), signal);
      await manager.handle(inbound('/new'), signal);
      await manager.handle(inbound('still support?'), signal);
      await manager.handle(inbound('/agent triage'), signal);
      expect(egress.finals).toEqual([
        'a',
        ['Current agent: lead', 'Agents you can talk to:', '• lead — the default agent', '• sql — Reviews SQL', '• support — Answers product questions', 'Switch with /agent <name>; /agent default goes back to the default.'].join('\n'),
        'Now talking to support (Answers product questions). New conversation started.',
        'b',
        'New conversation started.',
        'c',
        "No agent named 'triage' is available to you. Agents you can talk to: lead, sql, support.",
      ]);
      expect(contextOf(0).agent_name).toBeUndefined();
      expect(contextOf(1).agent_name).toBe('support');
      expect(contextOf(2).agent_name).toBe('support');
      const threads = runtime.requests.map((request) => request.threadId);
      expect(new Set(threads).size).toBe(3);
    });

    it('answers a chat with its default agent, else its channel’s, until someone chooses another; /agent default goes back', async () => {
      manager = managerWith({ agents: agents(), defaultAgents: { fake: 'support', [`fake/${chatId}`]: 'sql' } });
      runtime.scripts.push([values('a')], [values('b')], [values('c')], [values('d')]);
      await manager.handle(inbound('hello'), signal);
      await manager.handle(inbound('hello', { chatId: `${chatId}-other` }), signal);
      await manager.handle(inbound('/agent lead'), signal);
      await manager.handle(inbound('hello lead'), signal);
      await manager.handle(inbound('/agent default'), signal);
      await manager.handle(inbound('hello again'), signal);
      expect(runtime.requests.map((request) => request.request.context?.agent_name)).toEqual(['sql', 'support', 'lead', 'sql']);
      expect(egress.finals).toContain('Now talking to sql (Reviews SQL). New conversation started.');
    });

    it('lets a trusted sender set up an agent in a conversation of its own, and only where agents can be saved', async () => {
      manager = managerWith({ agents: agents(false) });
      await manager.handle(inbound('/bootstrap'), signal);
      await manager.handle(inbound('/bootstrap', { senderIsAllowlisted: true }), signal);
      manager = managerWith({ agents: agents(true) });
      runtime.scripts.push([values('What should it do?')], [values('Saved.')], [values('Normal again.')]);
      await manager.handle(inbound('/bootstrap', { senderIsAllowlisted: true }), signal);
      await manager.handle(inbound('It reviews SQL.', { senderIsAllowlisted: true }), signal);
      await manager.handle(inbound('/new', { senderIsAllowlisted: true }), signal);
      await manager.handle(inbound('hello', { senderIsAllowlisted: true }), signal);
      expect(egress.finals.slice(0, 2)).toEqual([MESSAGES.bootstrapNotAllowed, MESSAGES.bootstrapUnavailable]);
      expect(runtime.requests.map((request) => request.request.input?.messages[0]?.content)).toEqual(['Initialize workspace', 'It reviews SQL.', 'hello']);
      expect(runtime.requests.map((request) => request.request.context?.is_bootstrap)).toEqual([true, true, undefined]);
    });
  });

  describe('/goal', () => {
    it('says there is no goal before a conversation exists, sets one and runs the objective as chat, shows and clears it', async () => {
      await manager.handle(inbound('/goal'), signal);
      runtime.scripts.push([values('Working on it.')]);
      await manager.handle(inbound('/goal   ship the release notes  '), signal);
      await manager.handle(inbound('/goal'), signal);
      await manager.handle(inbound('/goal OFF'), signal);
      await manager.handle(inbound('/goal'), signal);
      expect(egress.finals).toEqual(['No active goal.', 'Working on it.', 'Goal: ship the release notes', 'Goal cleared.', 'No active goal.']);
      expect(runtime.requests[0]?.request.input?.messages[0]?.content).toBe('ship the release notes');
    });

    it('answers clear without a conversation, and says why an objective is refused', async () => {
      await manager.handle(inbound('/goal reset'), signal);
      runtime.setGoal = async () => {
        throw new AppError('UNPROCESSABLE', 'too long', { status: 422, userMessage: 'The goal objective must be at most 4000 characters.' });
      };
      await manager.handle(inbound(`/goal ${'x'.repeat(4001)}`), signal);
      runtime.setGoal = async () => {
        throw new Error('database down');
      };
      await manager.handle(inbound('/goal something'), signal);
      expect(egress.finals).toEqual(['Goal cleared.', 'The goal objective must be at most 4000 characters.', 'Failed to set goal.']);
      expect(runtime.requests).toEqual([]);
    });
  });

  describe('/memory', () => {
    it("counts and lists the sender's facts, clears them, and says so when memory is unavailable", async () => {
      runtime.facts.set(safeUserId('user 1'), ['Prefers concise answers', 'Works on the billing service']);
      runtime.facts.set(safeUserId('someone else'), ['Not yours']);
      await manager.handle(inbound('/memory'), signal);
      await manager.handle(inbound('/memory clear'), signal);
      await manager.handle(inbound('/memory'), signal);
      runtime.memoryFails = true;
      await manager.handle(inbound('/memory'), signal);
      expect(egress.finals).toEqual([
        'Memory contains 2 fact(s).\n• Prefers concise answers\n• Works on the billing service',
        'Memory cleared: 2 fact(s) forgotten.',
        'Memory contains 0 fact(s).',
        'Failed to fetch memory information.',
      ]);
      expect(runtime.facts.get(safeUserId('someone else'))).toEqual(['Not yours']);
    });

    it("shows and clears the memory of the sender and the conversation's custom agent, not the sender's own", async () => {
      runtime.facts.set(safeUserId('user 1'), ['Personal: has a cat']);
      runtime.facts.set(memoryOwnerOf(safeUserId('user 1'), 'triage'), ['Labels bugs as p1 first']);
      await manager.handle(inbound('/memory', { agentName: 'triage' }), signal);
      await manager.handle(inbound('/memory clear', { agentName: 'triage' }), signal);
      expect(egress.finals).toEqual(['Memory contains 1 fact(s).\n• Labels bugs as p1 first', 'Memory cleared: 1 fact(s) forgotten.']);
      expect(runtime.facts.get(safeUserId('user 1'))).toEqual(['Personal: has a cat']);
    });
  });

  describe('slash skills', () => {
    const skills: Record<string, SlashSkillResolution> = {
      '/data-analysis sum it': { kind: 'active', skill: {} as never, task: 'sum it' },
      '/old-skill go': { kind: 'disabled', name: 'old-skill' },
      '/nope x': { kind: 'unknown', name: 'nope' },
    };
    const withSkills = (resolve: (text: string) => Promise<SlashSkillResolution>) => managerWith({ resolveSkill: resolve });

    it('runs an enabled skill as chat, refuses a disabled one, and answers an unknown one like an unknown command', async () => {
      const skilled = withSkills(async (text) => skills[text] ?? { kind: 'none' });
      runtime.scripts.push([values('Analysed.')], [values('Plain chat.')]);
      for (const text of ['/data-analysis sum it', '/old-skill go', '/nope x', 'hello']) {
        await skilled.handle(inbound(text, { kind: 'chat' }), signal);
      }
      expect(egress.finals).toEqual([
        'Analysed.',
        'Skill `/old-skill` is installed but disabled. Enable it before using slash activation.',
        'Unknown command: /nope. Available commands: /agent | /bootstrap | /goal | /help | /memory | /models | /new | /schedule | /status',
        'Plain chat.',
      ]);
      expect(runtime.requests.map((r) => r.request.input?.messages[0]?.content)).toEqual(['/data-analysis sum it', 'hello']);
    });

    it('says so when skills cannot be resolved', async () => {
      const broken = withSkills(async () => {
        throw new Error('skill states unavailable');
      });
      await broken.handle(inbound('/data-analysis go', { kind: 'chat' }), signal);
      expect(egress.finals).toEqual(['Failed to resolve slash skill command. Please check the skill configuration.']);
    });
  });

  describe('files', () => {
    let dataDir: string;
    const sent: OutboundFile[] = [];
    const downloads: Record<string, Uint8Array | Error> = {};
    const files: ChannelFiles = {
      download: async (file) => {
        const result = downloads[file.ref];
        if (result instanceof Error) throw result;
        if (!result) throw new Error('unknown ref');
        return result;
      },
      send: async (_target, file) => {
        if (file.name === 'huge.bin') throw new ChannelError('fake', 'FILE_TOO_LARGE', 'too large');
        sent.push(file);
      },
    };
    const withFiles = () =>
      managerWith({
        channel: () => ({ egress, capabilities, files, displayName: 'Fake' }),
        sandboxPaths: (userId, threadId) => new SandboxPaths({ dataDir, skillsDir: join(dataDir, 'skills'), userId, threadId }),
      });

    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'dfc-manager-files-'));
    });
    afterAll(async () => {
      await rm(dataDir, { recursive: true, force: true });
    });
    beforeEach(() => {
      sent.length = 0;
    });

    it('saves what it could download into the uploads, tells the agent, and notes what it could not', async () => {
      downloads.ok = new TextEncoder().encode('a,b\n1,2\n');
      downloads.big = new ChannelError('fake', 'FILE_TOO_LARGE', 'over', { userMessage: 'exceeds the 20 MB download limit' });
      runtime.scripts.push([values('Got it.')]);
      await withFiles().handle(
        inbound('look at these', {
          kind: 'chat',
          files: [
            { name: '../../data.csv', mimeType: 'text/csv', isImage: false, ref: 'ok' },
            { name: 'movie.mp4', mimeType: 'video/mp4', isImage: false, ref: 'big' },
          ],
        }),
        signal,
      );
      const input = runtime.requests[0]?.request.input?.messages[0];
      expect(input?.content).toBe('look at these\n[Fake attachment unavailable: movie.mp4 (exceeds the 20 MB download limit)]');
      expect(input?.additional_kwargs).toEqual({
        files: [{ filename: 'data.csv', size: 8, path: '/mnt/user-data/uploads/data.csv', is_image: false }],
        original_user_content: 'look at these',
      });
      const threadId = runtime.requests[0]?.threadId as string;
      const saved = join(dataDir, 'users', safeUserId('user 1'), 'threads', threadId, 'user-data', 'uploads', 'data.csv');
      expect(await readFile(saved, 'utf8')).toBe('a,b\n1,2\n');
    });

    it('runs a message that is only a file', async () => {
      downloads.photo = new Uint8Array([0xff, 0xd8, 0xff]);
      runtime.scripts.push([values('Nice photo.')]);
      await withFiles().handle(inbound('', { kind: 'chat', files: [{ name: 'p.jpg', mimeType: 'image/jpeg', isImage: true, ref: 'photo' }] }), signal);
      expect(egress.finals).toEqual(['Nice photo.']);
    });

    it('delivers presented output files after the final text, names every file, and skips what is not an output', async () => {
      const manager = withFiles();
      // First turn creates the thread; the files are written where the agent would write them.
      runtime.scripts.push([values('hi')]);
      await manager.handle(inbound('hi', { kind: 'chat' }), signal);
      const threadId = runtime.requests[0]?.threadId as string;
      const outputs = join(dataDir, 'users', safeUserId('user 1'), 'threads', threadId, 'user-data', 'outputs');
      await mkdir(outputs, { recursive: true });
      await writeFile(join(outputs, 'report.md'), '# Report');
      await writeFile(join(outputs, 'huge.bin'), 'pretend this is big');
      const presented = {
        event: 'values',
        data: {
          messages: [
            { type: 'human', content: 'make files' },
            {
              type: 'ai',
              content: '',
              tool_calls: [
                {
                  name: 'present_files',
                  args: { filepaths: ['/mnt/user-data/outputs/report.md', '/mnt/user-data/outputs/huge.bin', '/mnt/user-data/uploads/secret.txt'] },
                },
              ],
            },
            { type: 'tool', content: 'Presented' },
            { type: 'ai', content: 'Here you go.' },
          ],
        },
      } satisfies StreamPart;
      runtime.scripts.push([presented]);
      await manager.handle(inbound('make files', { kind: 'chat' }), signal);
      expect(egress.finals.at(-1)).toBe('Here you go.\n\nCreated Files: 📎 secret.txt、report.md、huge.bin');
      expect(sent.map((file) => [file.name, file.mimeType, file.size])).toEqual([['report.md', 'text/markdown', 8]]);
    });
  });

  describe('identity', () => {
    const gate = (binding?: IdentityBinding) => ({
      requiresBoundIdentity: true,
      findBinding: async () => binding,
    });
    const withGate = (identities: IdentityGate, caps: ChannelCapabilities = STREAMING) =>
      managerWith({ channel: () => ({ egress, capabilities: caps }), identities });

    it('never trusts an owner claimed by chat ingress: the gate decides', async () => {
      await withGate(gate()).handle(inbound('hi', { kind: 'chat', ownerUserId: 'forged-owner' }), signal);
      expect(egress.finals).toEqual([MESSAGES.unboundIdentity]);
      expect(runtime.requests).toEqual([]);

      runtime.scripts.push([values('ok')]);
      await withGate(gate({ id: randomUUID(), ownerUserId: 'real-owner' })).handle(inbound('hi', { kind: 'chat', ownerUserId: 'forged-owner' }), signal);
      expect(runtime.requests[0]?.request.context).toMatchObject({ user_id: 'real-owner' });
    });

    it("tells a sender bound to a disabled account so, commands included, and runs nothing, even where binding is not required", async () => {
      const disabled = { id: randomUUID(), ownerUserId: 'off', isOwnerDisabled: true };
      await withGate(gate(disabled)).handle(inbound('hi', { kind: 'chat' }), signal);
      await withGate(gate(disabled)).handle(inbound('/new', { kind: 'command' }), signal);
      await withGate({ requiresBoundIdentity: false, findBinding: async () => disabled }).handle(inbound('hi', { kind: 'chat' }), signal);
      expect(egress.finals).toEqual([MESSAGES.accountDisabled, MESSAGES.accountDisabled, MESSAGES.accountDisabled]);
      expect(runtime.requests).toEqual([]);
    });

    it('gives a bound sender bash only when the owner holds the shell grant, whatever ingress claims', async () => {
      const forged = { kind: 'chat', isOwnerShellGranted: true } as Partial<InboundMessage>;
      runtime.scripts.push([values('ok')], [values('ok')], [values('ok')]);
      await withGate(gate({ id: randomUUID(), ownerUserId: 'ungranted' })).handle(inbound('hi', forged), signal);
      await withGate(gate({ id: randomUUID(), ownerUserId: 'granted', ownerCanUseShell: true })).handle(inbound('hi', { kind: 'chat' }), signal);
      // Operator-listed in allowed_users: trusted even when bound to an ungranted owner.
      await withGate(gate({ id: randomUUID(), ownerUserId: 'ungranted' })).handle(inbound('hi', { kind: 'chat', senderIsAllowlisted: true }), signal);
      expect(runtime.requests.map((r) => [r.request.context?.user_id, r.request.context?.trusted_sender])).toEqual([
        ['ungranted', false],
        ['granted', true],
        ['ungranted', true],
      ]);
    });

    it('looks a sender up without a workspace only where the platform allows it (a Discord DM binding in a server)', async () => {
      const lookups: (string | undefined)[] = [];
      const dmOnly = {
        requiresBoundIdentity: true,
        findBinding: async (_provider: string, identity: { workspaceId?: string }) => {
          lookups.push(identity.workspaceId);
          return identity.workspaceId === undefined ? { id: randomUUID(), ownerUserId: 'dm-owner' } : undefined;
        },
      };
      const inGuild = () => inbound('hi', { kind: 'chat', workspaceId: 'guild-1', messageId: randomUUID() });
      await withGate(dmOnly).handle(inGuild(), signal);
      expect(egress.finals).toEqual([MESSAGES.unboundIdentity]);
      expect(lookups).toEqual(['guild-1']);

      runtime.scripts.push([values('ok')]);
      await withGate(dmOnly, { ...STREAMING, identityFallsBackToNoWorkspace: true }).handle(inGuild(), signal);
      expect(lookups).toEqual(['guild-1', 'guild-1', undefined]);
      expect(runtime.requests[0]?.request.context).toMatchObject({ user_id: 'dm-owner' });
    });

    it('lets event platforms (no bound identity required) name the owner themselves', async () => {
      runtime.scripts.push([values('ok')]);
      const events = { ...STREAMING, runMode: 'wait' as const, requiresBoundIdentity: false };
      await withGate(gate(), events).handle(inbound('issue opened', { kind: 'chat', ownerUserId: 'agent-owner' }), signal);
      expect(runtime.requests[0]?.request.context).toMatchObject({ user_id: 'agent-owner' });
    });
  });
});
