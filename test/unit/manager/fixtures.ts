import { randomUUID } from 'node:crypto';
import type { ChannelCapabilities, InboundMessage, Reply, ReplyTarget } from '../../../src/channel/types.js';
import type {
  AgentRuntime,
  GoalInfo,
  MemoryInfo,
  RunInfo,
  RunRequest,
  SetGoalRequest,
  StreamPart,
  ThreadGoalInfo,
  ThreadInfo,
} from '../../../src/runtime/types.js';

/* What the manager's unit tests share: a recording egress, a scripted runtime, message builders. */

/** What one reply looked like to the user: every partial, then the final. */
export interface RecordedReply {
  target: ReplyTarget;
  updates: string[];
  finals: string[];
  /** `failed` of each final's outcome; undefined when the manager gave none. */
  failed: (boolean | undefined)[];
  /** `awaitsAnswer` of each final's outcome. */
  awaitsAnswer: (boolean | undefined)[];
  /** The manager stopped the reply without a final (another process answers). */
  isAbandoned: boolean;
}

export class RecordingEgress {
  readonly replies: RecordedReply[] = [];
  reply(target: ReplyTarget): Reply {
    const record: RecordedReply = { target, updates: [], finals: [], failed: [], awaitsAnswer: [], isAbandoned: false };
    this.replies.push(record);
    return {
      update: (text) => void record.updates.push(text),
      abandon: () => {
        record.isAbandoned = true;
      },
      finish: async (text, outcome) => {
        record.finals.push(text);
        record.failed.push(outcome?.failed);
        record.awaitsAnswer.push(outcome?.awaitsAnswer);
      },
    };
  }
  /** `failed` of every final's outcome, in order. */
  get outcomes(): (boolean | undefined)[] {
    return this.replies.flatMap((r) => r.failed);
  }
  get finals(): string[] {
    return this.replies.flatMap((r) => r.finals);
  }
}

type Script = StreamPart[] | Error;

/** A stand-in for our own AgentRuntime interface: scripted runs, threads in memory. */
export class ScriptedRuntime implements AgentRuntime {
  readonly threads: string[] = [];
  readonly requests: { threadId: string; request: RunRequest }[] = [];
  scripts: Script[] = [];
  modelNames = ['default'];
  /** Whether each model of `modelNames` thinks, where it is set. */
  modelThinking: Record<string, 'on' | 'off'> = {};
  /** Models that see images. */
  modelVision = new Set<string>();
  createThreadDelayMs = 0;

  async createThread(): Promise<ThreadInfo> {
    if (this.createThreadDelayMs) await new Promise((r) => setTimeout(r, this.createThreadDelayMs));
    const id = randomUUID();
    this.threads.push(id);
    return { thread_id: id, created_at: '', updated_at: '', metadata: {}, status: 'idle', values: null, interrupts: {} };
  }
  async getThread(_threadId: string): Promise<ThreadInfo> {
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
  async joinRun(): Promise<never> {
    throw new Error('unused');
  }
  async cancelRun(): Promise<void> {}
  models() {
    return this.modelNames.map((name) => ({
      name,
      model: name,
      ...(this.modelThinking[name] ? { thinking: this.modelThinking[name] } : {}),
      ...(this.modelVision.has(name) ? { supports_vision: true } : {}),
    }));
  }
  readonly goals = new Map<string, GoalInfo>();
  async getGoal(threadId: string): Promise<GoalInfo | null> {
    return this.goals.get(threadId) ?? null;
  }
  async setGoal(threadId: string, request: SetGoalRequest): Promise<GoalInfo> {
    const goal = { objective: request.objective, max_continuations: 8, last_evaluation: null, created_at: '', updated_at: '' };
    this.goals.set(threadId, goal);
    return goal;
  }
  async clearGoal(threadId: string): Promise<boolean> {
    return this.goals.delete(threadId);
  }
  async listGoals(): Promise<ThreadGoalInfo[]> {
    return [...this.goals].map(([threadId, goal]) => ({ thread_id: threadId, conversation: null, goal }));
  }
  async deleteMemoryFact(): Promise<boolean> {
    return false;
  }
  readonly facts = new Map<string, string[]>();
  memoryFails = false;
  async getMemory(userId: string): Promise<MemoryInfo> {
    if (this.memoryFails) throw new Error('memory store down');
    const facts = (this.facts.get(userId) ?? []).map((content, i) => ({
      id: String(i),
      content,
      category: 'preference',
      confidence: 0.9 - i / 100,
      source: null,
      created_at: '',
    }));
    return { user_id: userId, summaries: { work_context: '', personal_context: '', top_of_mind: '' }, facts };
  }
  async clearMemory(userId: string): Promise<number> {
    const count = this.facts.get(userId)?.length ?? 0;
    this.facts.delete(userId);
    return count;
  }
  async close(): Promise<void> {}
}

export const chunk = (text: string): StreamPart => ({ event: 'messages', data: [{ type: 'ai', id: 'm1', content: text }, {}] });
export const values = (answer: string): StreamPart => ({
  event: 'values',
  data: { messages: [{ type: 'human', content: 'q' }, { type: 'ai', content: answer }] },
});

export const STREAMING: ChannelCapabilities = {
  streaming: 'edit',
  maxMessageChars: 4096,
  hasThreads: false,
  files: { maxInboundBytes: 0, maxOutboundBytes: 0 },
  groupTrigger: 'every-message',
  runMode: 'stream',
};

let counter = 0;
export function inboundIn(chatId: string, text: string, overrides: Partial<InboundMessage> = {}): InboundMessage {
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
