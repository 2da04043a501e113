import type { ChannelStateStore, ReplyTarget } from '../../src/channel/types.js';
import { CONTEXT_TOKEN } from './decide.js';

/**
 * The `context_token`s replies must echo (iLink issues one with every inbound message), kept in
 * the channel's database state per chat and per conversation, so a reply sent after a restart,
 * by another process, or later by the outbox or a schedule still reaches the person.
 */
export class ContextTokens {
  constructor(private readonly state: ChannelStateStore) {}

  /** Keeps `token` as the latest of the chat (and of its conversation, when it has one). */
  async remember(chatId: string, token: string, topicId?: string): Promise<void> {
    await this.state.set(chatKey(chatId), token);
    if (topicId !== undefined) await this.state.set(topicKey(chatId, topicId), token);
  }

  /** The token for a reply to `target`: the message's own, else its conversation's, else its chat's latest. */
  async forTarget(target: Pick<ReplyTarget, 'chatId' | 'topicId' | 'platformData'>): Promise<string | undefined> {
    const own = target.platformData?.[CONTEXT_TOKEN];
    if (typeof own === 'string' && own !== '') return own;
    if (target.topicId !== undefined) {
      const topic = await this.state.get(topicKey(target.chatId, target.topicId));
      if (typeof topic === 'string') return topic;
    }
    const chat = await this.state.get(chatKey(target.chatId));
    return typeof chat === 'string' ? chat : undefined;
  }
}

function chatKey(chatId: string): string {
  return `context-token:${chatId}`;
}

function topicKey(chatId: string, topicId: string): string {
  return `context-token:${chatId}:${topicId}`;
}
