import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChannelCapabilities, InboundMessage, Reply, ReplyTarget } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { openTestDatabase } from '../../helpers/database.js';
import { ThreadMapRepo } from '../../../src/db/repos/thread-map-repo.js';
import { AgentError, ThreadBusyError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { ChannelManager } from '../../../src/manager/channel-manager.js';
import { MemoryDedupeStore } from '../../../src/manager/dedupe.js';
import { MESSAGES } from '../../../src/manager/messages.js';
import { ThreadResolver } from '../../../src/manager/threads.js';
import type { AgentRuntime, RunInfo, RunRequest, StreamPart, ThreadInfo } from '../../../src/runtime/types.js';

/** What one reply looked like to the user: every partial, then the final. */
interface RecordedReply {
  target: ReplyTarget;
  updates: string[];
  finals: string[];
}

class RecordingEgress {
  readonly replies: RecordedReply[] = [];
  reply(target: ReplyTarget): Reply {
    const record: RecordedReply = { target, updates: [], finals: [] };
    this.replies.push(record);
    return {
      update: (text) => void record.updates.push(text),
      finish: async (text) => void record.finals.push(text),
    };
  }
  get finals(): string[] {
    return this.replies.flatMap((r) => r.finals);
  }
}

type Script = StreamPart[] | Error;

/** A stand-in for our own AgentRuntime interface: scripted runs, threads in memory. */
class ScriptedRuntime implements AgentRuntime {
  readonly threads: string[] = [];
  readonly requests: { threadId: string; request: RunRequest }[] = [];
  scripts: Script[] = [];
  modelNames = ['default'];
  createThreadDelayMs = 0;

  async createThread(): Promise<ThreadInfo> {
    if (this.createThreadDelayMs) await new Promise((r) => setTimeout(r, this.createThreadDelayMs));
    const id = randomUUID();
    this.threads.push(id);
    return { thread_id: id, created_at: '', updated_at: '', metadata: {}, status: 'idle', values: null, interrupts: {} };
  }
  async getThread(): Promise<ThreadInfo> {
    throw new Error('unused');
  }
  async streamRun(threadId: string, request: RunRequest) {
    this.requests.push({ threadId, request });
    const script = this.scripts.shift() ?? [];
    if (script instanceof Error) throw script;
    async function* events() {
      for (const part of script as StreamPart[]) yield part;
    }
    return { run: { run_id: randomUUID(), thread_id: threadId } as RunInfo, events: events() };
  }
  async waitRun(threadId: string, request: RunRequest) {
    this.requests.push({ threadId, request });
    const script = this.scripts.shift() ?? [];
    if (script instanceof Error) throw script;
    const last = (script as StreamPart[]).filter((p) => p.event === 'values').at(-1);
    return { run: { run_id: randomUUID(), thread_id: threadId } as RunInfo, values: (last?.data ?? {}) as Record<string, unknown> };
  }
  async createRun(threadId: string, request: RunRequest): Promise<RunInfo> {
    this.requests.push({ threadId, request });
    const script = this.scripts.shift();
    if (script instanceof Error) throw script;
    return { run_id: randomUUID(), thread_id: threadId } as RunInfo;
  }
  async getRun(): Promise<never> {
    throw new Error('unused');
  }
  async cancelRun(): Promise<void> {}
  models() {
    return this.modelNames.map((name) => ({ name, model: name }));
  }
  async close(): Promise<void> {}
}

const chunk = (text: string): StreamPart => ({ event: 'messages', data: [{ type: 'ai', id: 'm1', content: text }, {}] });
const values = (answer: string): StreamPart => ({
  event: 'values',
  data: { messages: [{ type: 'human', content: 'q' }, { type: 'ai', content: answer }] },
});

const STREAMING: ChannelCapabilities = {
  streaming: 'edit',
  maxMessageChars: 4096,
  hasThreads: false,
  files: { maxInboundBytes: 0, maxOutboundBytes: 0 },
  groupTrigger: 'every-message',
  runMode: 'stream',
};

let counter = 0;
function inboundIn(chatId: string, text: string, overrides: Partial<InboundMessage> = {}): InboundMessage {
  counter++;
  return {
    channel: 'fake',
    chatId,
    userId: 'user 1',
    workspaceId: chatId,
    messageId: String(counter),
    text,
    kind: text.startsWith('/') ? 'command' : 'chat',
    isPrivateChat: true,
    replyTo: { messageId: String(counter) },
    receivedAt: 0,
    ...overrides,
  };
}

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
    manager = new ChannelManager({
      runtime,
      threads: new ThreadResolver(new ThreadMapRepo(database.db), runtime),
      dedupe: new MemoryDedupeStore(),
      channel: (name) => (name === 'fake' ? { egress, capabilities } : undefined),
      logger: silentLogger(),
      now: () => now,
    });
  });
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

    it('shows the busy text and lets a redelivery retry when the thread is busy', async () => {
      runtime.scripts.push(new ThreadBusyError('t'), [values('done')]);
      const message = inbound('hello');
      await manager.handle(message, signal);
      expect(egress.finals).toEqual([MESSAGES.threadBusy]);
      await manager.handle(message, signal);
      expect(egress.finals).toEqual([MESSAGES.threadBusy, 'done']);
    });

    it('ends a failed run with the error text, keeps streamed text, and releases the dedupe key', async () => {
      runtime.scripts.push([{ event: 'error', data: { error: 'MODEL_FAILED' } }]);
      const message = inbound('hello');
      await manager.handle(message, signal);
      expect(egress.finals).toEqual([MESSAGES.streamError]);
      runtime.scripts.push([chunk('Partial answer'), { event: 'error', data: {} }]);
      await manager.handle(message, signal);
      expect(egress.finals[1]).toBe('Partial answer');
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

    it('runs a redelivered message once', async () => {
      runtime.scripts.push([values('once')], [values('twice')]);
      const message = inbound('hello');
      await manager.handle(message, signal);
      await manager.handle({ ...message }, signal);
      expect(egress.finals).toEqual(['once']);
    });

    it('does not dedupe messages without a workspace (ids could collide across workspaces)', async () => {
      runtime.scripts.push([values('one')], [values('two')]);
      const message = inbound('hello', { workspaceId: undefined });
      await manager.handle(message, signal);
      await manager.handle({ ...message }, signal);
      expect(egress.finals).toEqual(['one', 'two']);
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
        'Available commands:\n/new — Start a new conversation\n/status — Show current thread info\n/models — List available models\n/help — Show this help',
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

    it('/models lists the configured models, or says there are none', async () => {
      runtime.modelNames = ['default', 'fast'];
      await manager.handle(inbound('/models'), signal);
      runtime.modelNames = [];
      await manager.handle(inbound('/models'), signal);
      expect(egress.finals).toEqual(['Available models:\n• default\n• fast', 'No models configured.']);
    });

    it.each([
      ['/frobnicate', 'Unknown command: /frobnicate. Available commands: /help | /models | /new | /status'],
      ['//help', 'Unknown command: //help. Available commands: /help | /models | /new | /status'],
      [' /new', 'Unknown command: /new. Available commands: /help | /models | /new | /status'],
    ])('%j gets the unknown-command reply', async (text, expected) => {
      await manager.handle(inbound(text, { kind: 'command' }), signal);
      expect(egress.finals).toEqual([expected]);
    });
  });
});
