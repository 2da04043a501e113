import type { ChannelStateStore, JsonValue } from '../../src/channel/types.js';
import { describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';

/** How long a question the agent asked in a group waits for its answer (reference §6.4). */
export const PENDING_QUESTION_TTL_MS = 30 * 60 * 1000;

/** A group message, as far as choosing its conversation goes. */
export interface GroupMessageIds {
  chatId: string;
  userId: string;
  messageId: string;
  /** Feishu's reply chain and topic ids; all absent for a top-level message. */
  rootId?: string;
  parentId?: string;
  threadId?: string;
  /** Commands never answer a pending question. */
  isCommand: boolean;
}

/** Which conversation a group message belongs to. */
export interface TopicChoice {
  topicId: string;
  /** The message answers a question the agent asked this person in this chat. */
  answersQuestion: boolean;
}

interface PendingQuestion {
  topicId: string;
  expiresAt: number;
}

/**
 * Keeps group conversations together where Feishu's own reply chain would split them (reference
 * §3.3, §6.4). In a group each top-level message starts a conversation and a reply carries its
 * chain's `root_id`, so replies continue. Two cases need memory, kept in the channel's durable
 * state so every process and a restart see it:
 *
 * - The agent asked this person a question (`awaitsAnswer`): their next plain (top-level, not a
 *   command) message in that chat answers it within 30 minutes, oldest question first
 *   (`question:<chat>:<user>` → FIFO list).
 * - That answer is a new top-level message, so replies to it, or to the card answering it, carry
 *   its id as their root: `topic:<chat>:<message>` maps it to the conversation it joined.
 *
 * Two processes answering the same person at the same instant could both read the same list;
 * within one process the updates of one key run one at a time.
 */
export class GroupTopics {
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly state: ChannelStateStore,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  /** The person's next plain message in `chatId` continues `topicId`. Best effort; never throws. */
  async awaitAnswer(chatId: string, userId: string, topicId: string): Promise<void> {
    const key = questionKey(chatId, userId);
    await this.serialized(key, async () => {
      const pending = this.unexpired(await this.state.get(key));
      pending.push({ topicId, expiresAt: this.now() + PENDING_QUESTION_TTL_MS });
      await this.state.set(key, pending as unknown as JsonValue);
    }).catch((error: unknown) => this.logger.warn({ err: describeError(error) }, 'Feishu pending question not stored'));
  }

  /**
   * The conversation of a group message: the one its reply chain joined, else the oldest
   * question it answers, else its own root (`root_id ?? thread_id ?? message_id`). Claims the
   * question it answers. A state that cannot be read falls back to Feishu's ids.
   */
  async choose(message: GroupMessageIds): Promise<TopicChoice> {
    const ownRoot = message.rootId ?? message.threadId ?? message.messageId;
    const isTopLevel = message.rootId === undefined && message.parentId === undefined && message.threadId === undefined;
    try {
      if (!isTopLevel) {
        const joined = await this.state.get(topicKey(message.chatId, ownRoot));
        return { topicId: typeof joined === 'string' ? joined : ownRoot, answersQuestion: false };
      }
      if (message.isCommand) return { topicId: ownRoot, answersQuestion: false };
      const key = questionKey(message.chatId, message.userId);
      const answered = await this.serialized(key, async () => {
        const stored = await this.state.get(key);
        if (stored === undefined) return undefined;
        const pending = this.unexpired(stored);
        const first = pending.shift();
        await (pending.length > 0 ? this.state.set(key, pending as unknown as JsonValue) : this.state.delete(key));
        return first?.topicId;
      });
      if (answered === undefined) return { topicId: ownRoot, answersQuestion: false };
      await this.state.set(topicKey(message.chatId, message.messageId), answered);
      return { topicId: answered, answersQuestion: true };
    } catch (error) {
      this.logger.warn({ err: describeError(error) }, 'Feishu topic state not readable; using the reply chain');
      return { topicId: ownRoot, answersQuestion: false };
    }
  }

  /** The unexpired questions of a stored list, oldest first. */
  private unexpired(stored: JsonValue | undefined): PendingQuestion[] {
    if (!Array.isArray(stored)) return [];
    const now = this.now();
    return stored.filter(
      (entry): entry is PendingQuestion & JsonValue =>
        entry !== null && typeof entry === 'object' && !Array.isArray(entry) && typeof entry.topicId === 'string' && typeof entry.expiresAt === 'number' && entry.expiresAt > now,
    );
  }

  private serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.queues.set(key, next);
    void next.finally(() => {
      if (this.queues.get(key) === next) this.queues.delete(key);
    }).catch(() => undefined);
    return next;
  }
}

function questionKey(chatId: string, userId: string): string {
  return `question:${chatId}:${userId}`;
}

function topicKey(chatId: string, messageId: string): string {
  return `topic:${chatId}:${messageId}`;
}
