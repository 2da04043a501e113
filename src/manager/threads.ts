import type { InboundMessage } from '../channel/types.js';
import { ReadCache } from '../db/read-cache.js';
import type { ConversationsRepo } from '../db/repos/conversations-repo.js';
import type { ConversationKey, ConversationRecord, ConversationSettings, ThreadMapRepo } from '../db/repos/thread-map-repo.js';
import type { AgentRuntime } from '../runtime/types.js';

function conversationOf(message: InboundMessage): ConversationKey {
  return { channel: message.channel, chatId: message.chatId, topicId: message.topicId };
}

/** Where a conversation's thread is recorded: per binding for bound senders, per chat otherwise. */
interface ThreadMap {
  find(message: InboundMessage): Promise<ConversationRecord | undefined>;
  insertIfAbsent(message: InboundMessage, threadId: string): Promise<ConversationRecord>;
  replace(message: InboundMessage, threadId: string, settings: ConversationSettings): Promise<void>;
}

function threadMapOf(repo: ThreadMapRepo, conversations: ConversationsRepo | undefined): ThreadMap {
  const boundKey = (message: InboundMessage) => ({
    connectionId: message.connectionId as string,
    chatId: message.chatId,
    ...(message.topicId === undefined ? {} : { topicId: message.topicId }),
  });
  const isBound = (message: InboundMessage) => message.connectionId !== undefined && conversations !== undefined;
  return {
    find: (message) => (isBound(message) ? (conversations as ConversationsRepo).find(boundKey(message)) : repo.find(conversationOf(message))),
    insertIfAbsent: (message, threadId) =>
      isBound(message)
        ? (conversations as ConversationsRepo).insertIfAbsent(boundKey(message), threadId)
        : repo.insertIfAbsent(conversationOf(message), threadId, message.userId),
    replace: (message, threadId, settings) =>
      isBound(message)
        ? (conversations as ConversationsRepo).replace(boundKey(message), threadId, settings)
        : repo.replace(conversationOf(message), threadId, message.userId, settings),
  };
}

export interface ThreadResolverOptions {
  /** Where bound senders' conversations are kept; absent = every conversation is per chat. */
  conversations?: ConversationsRepo;
  /**
   * True when no other process shares the database (PGlite): the mappings this process read are
   * then kept (a bounded number), since only its own `resolve` and `startNew` change them.
   */
  isSoleProcess?: boolean;
}

/** Conversations whose thread a sole process keeps, so a message needs no statement to find it. */
const CACHED_CONVERSATIONS = 4096;

/**
 * Finds or creates the agent thread of a conversation. A bound sender's conversations are kept
 * per binding (reference §8.2 `channel_conversations`), so two bound people in one group chat
 * each get their own thread. Concurrent first messages of one
 * conversation share a single creation (reference §3.4); across processes the mapping's
 * primary key decides the winner and the loser adopts its thread.
 */
export class ThreadResolver {
  private readonly creating = new Map<string, Promise<ConversationRecord>>();
  private readonly map: ThreadMap;
  private readonly cache: ReadCache<ConversationRecord | undefined>;

  constructor(
    repo: ThreadMapRepo,
    private readonly runtime: AgentRuntime,
    options: ThreadResolverOptions = {},
  ) {
    this.map = threadMapOf(repo, options.conversations);
    this.cache = new ReadCache(options.isSoleProcess ? CACHED_CONVERSATIONS : 0);
  }

  /** The conversation's thread id, or undefined before its first message. */
  async find(message: InboundMessage): Promise<string | undefined> {
    return (await this.conversation(message))?.threadId;
  }

  /** The conversation's mapping (thread, chosen agent, setup mode), or undefined before its first message. */
  conversation(message: InboundMessage): Promise<ConversationRecord | undefined> {
    return this.cache.read(conversationKeyOf(message), () => this.map.find(message));
  }

  async resolve(message: InboundMessage): Promise<string> {
    return (await this.resolveConversation(message)).threadId;
  }

  /** The conversation's mapping, created with a new thread on its first message. */
  async resolveConversation(message: InboundMessage): Promise<ConversationRecord> {
    const existing = await this.conversation(message);
    if (existing) return existing;
    const key = conversationKeyOf(message);
    let pending = this.creating.get(key);
    if (!pending) {
      pending = this.create(message).finally(() => this.creating.delete(key));
      this.creating.set(key, pending);
    }
    return pending;
  }

  /**
   * Starts a fresh thread for the conversation and points it there, set up as `settings` say
   * (`/agent`, `/bootstrap`); without an `agentName` the conversation keeps its agent (`/new`).
   * Setup mode ends unless `settings` asks for it.
   */
  async startNew(message: InboundMessage, settings: ConversationSettings = {}): Promise<string> {
    const agentName = 'agentName' in settings ? settings.agentName : (await this.conversation(message))?.agentName;
    const thread = await this.runtime.createThread({ metadata: channelSource(message) });
    await this.cache.write(conversationKeyOf(message), () =>
      this.map.replace(message, thread.thread_id, { agentName, isBootstrapping: settings.isBootstrapping === true }),
    );
    return thread.thread_id;
  }

  private async create(message: InboundMessage): Promise<ConversationRecord> {
    const existing = await this.conversation(message);
    if (existing) return existing;
    // A deterministic id (GitHub's uuid5 per repo, issue and agent) lets every process and restart
    // agree on the thread even before the mapping exists; `do_nothing` adopts one made meanwhile.
    const thread = await this.runtime.createThread(
      message.preferredThreadId === undefined
        ? { metadata: channelSource(message) }
        : { thread_id: message.preferredThreadId, if_exists: 'do_nothing', metadata: channelSource(message) },
    );
    return this.cache.write(conversationKeyOf(message), () => this.map.insertIfAbsent(message, thread.thread_id));
  }
}

/** One string per conversation as the thread map keys it: the chat (and topic), and the binding it is seen through. */
function conversationKeyOf(message: InboundMessage): string {
  return JSON.stringify([conversationOf(message), message.connectionId ?? null]);
}

/** Thread metadata that says where a conversation lives (reference §1.5). */
function channelSource(message: InboundMessage): Record<string, unknown> {
  return {
    // A bound sender's threads belong to their account, as if they had created them through the API.
    ...(message.ownerUserId === undefined ? {} : { owner_user_id: message.ownerUserId }),
    channel_source: {
      type: 'im_channel',
      provider: message.channel,
      chat_id: message.chatId,
      ...(message.topicId === undefined ? {} : { topic_id: message.topicId }),
    },
  };
}
