import type { InboundMessage } from '../channel/types.js';
import type { ConversationKey, ThreadMapRepo } from '../db/repos/thread-map-repo.js';
import type { AgentRuntime } from '../runtime/types.js';

function conversationOf(message: InboundMessage): ConversationKey {
  return { channel: message.channel, chatId: message.chatId, topicId: message.topicId };
}

/**
 * Finds or creates the agent thread of a conversation. Concurrent first messages of one
 * conversation share a single creation (reference §3.4); across processes the mapping's
 * primary key decides the winner and the loser adopts its thread.
 */
export class ThreadResolver {
  private readonly creating = new Map<string, Promise<string>>();

  constructor(
    private readonly repo: ThreadMapRepo,
    private readonly runtime: AgentRuntime,
  ) {}

  find(message: InboundMessage): Promise<string | undefined> {
    return this.repo.find(conversationOf(message));
  }

  async resolve(message: InboundMessage): Promise<string> {
    const existing = await this.find(message);
    if (existing) return existing;
    const key = JSON.stringify(conversationOf(message));
    let pending = this.creating.get(key);
    if (!pending) {
      pending = this.create(message).finally(() => this.creating.delete(key));
      this.creating.set(key, pending);
    }
    return pending;
  }

  /** Starts a fresh thread for the conversation and points it there (`/new`). */
  async startNew(message: InboundMessage): Promise<string> {
    const thread = await this.runtime.createThread({ metadata: channelSource(message) });
    await this.repo.replace(conversationOf(message), thread.thread_id, message.userId);
    return thread.thread_id;
  }

  private async create(message: InboundMessage): Promise<string> {
    const existing = await this.find(message);
    if (existing) return existing;
    const thread = await this.runtime.createThread({ metadata: channelSource(message) });
    return this.repo.insertIfAbsent(conversationOf(message), thread.thread_id, message.userId);
  }
}

/** Thread metadata that says where a conversation lives (reference §1.5). */
function channelSource(message: InboundMessage): Record<string, unknown> {
  return {
    channel_source: {
      type: 'im_channel',
      provider: message.channel,
      chat_id: message.chatId,
      ...(message.topicId === undefined ? {} : { topic_id: message.topicId }),
    },
  };
}
