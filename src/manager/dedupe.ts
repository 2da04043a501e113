import type { InboundMessage } from '../channel/types.js';

/** (channel, workspace, chat, platform message id): one accepted delivery of one message. */
export interface DedupeKey {
  channel: string;
  workspaceId: string;
  chatId: string;
  messageId: string;
}

/**
 * Remembers accepted messages for a while so a platform redelivery runs once (reference §4.2).
 * `acquire` is atomic across every process sharing the store.
 */
export interface DedupeStore {
  /** True when the key is new (proceed); false when it was seen within the TTL (drop). */
  acquire(key: DedupeKey): Promise<boolean>;
  /** Forgets the key so a redelivery may retry after a failure. */
  release(key: DedupeKey): Promise<void>;
}

export const DEDUPE_TTL_MS = 10 * 60 * 1000;

/**
 * No message id or no workspace → no key: better to answer twice than to collapse two
 * workspaces' identical ids into one (reference §13 item 7).
 */
export function dedupeKeyOf(message: InboundMessage): DedupeKey | undefined {
  if (!message.messageId || !message.workspaceId) return undefined;
  return { channel: message.channel, workspaceId: message.workspaceId, chatId: message.chatId, messageId: message.messageId };
}

/** In-memory store: TTL and a size cap, oldest evicted first. */
export class MemoryDedupeStore implements DedupeStore {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
  ) {}

  async acquire(key: DedupeKey): Promise<boolean> {
    const now = (this.options.now ?? Date.now)();
    const ttl = this.options.ttlMs ?? DEDUPE_TTL_MS;
    for (const [k, at] of this.seen) {
      if (now - at < ttl && this.seen.size < (this.options.maxEntries ?? 4096)) break;
      this.seen.delete(k);
    }
    const id = JSON.stringify([key.channel, key.workspaceId, key.chatId, key.messageId]);
    const at = this.seen.get(id);
    if (at !== undefined && now - at < ttl) return false;
    this.seen.delete(id);
    this.seen.set(id, now);
    return true;
  }

  async release(key: DedupeKey): Promise<void> {
    this.seen.delete(JSON.stringify([key.channel, key.workspaceId, key.chatId, key.messageId]));
  }
}
