import { type BaseMessage, isBaseMessage } from '@langchain/core/messages';

/** Where one stored channel value lives: `checkpoint_blobs`' key. */
export interface BlobKey {
  threadId: string;
  checkpointNs: string;
  channel: string;
  version: string;
}

/**
 * The message lists this process last stored or read, per thread, namespace and channel, as the
 * live objects (so neither deserialized nor re-serialized on the next turn). A channel version is
 * written once and never changes, also across processes, so an entry is right for as long as it
 * is kept; another process's newer version is a different key and simply misses. Only the latest
 * version of each channel is kept, and at most `maxLists` lists in all (least recently used go).
 *
 * Lists are handed out as copies; the messages in them are shared, as LangGraph shares them
 * between the steps of a run (it never changes a stored message, it replaces it).
 */
export class MessageListCache {
  private readonly lists = new Map<string, HeldList>();

  constructor(private readonly maxLists = 256) {}

  /** True for a value this cache keeps: a non-empty array of LangChain messages. */
  static isMessageList(value: unknown): value is BaseMessage[] {
    return Array.isArray(value) && value.length > 0 && value.every((item) => isBaseMessage(item));
  }

  /** The list held under `key` (read-only: copy it before handing it out), or `undefined`. */
  get(key: BlobKey): HeldList | undefined {
    const entry = this.latest(key);
    return entry?.version === key.version ? entry : undefined;
  }

  /** The latest list held for the key's thread, namespace and channel, whatever its version. */
  latest(key: Omit<BlobKey, 'version'>): HeldList | undefined {
    const slot = slotOf(key);
    const entry = this.lists.get(slot);
    if (entry === undefined) return undefined;
    // Re-inserted: the Map's order is the recency order.
    this.lists.delete(slot);
    this.lists.set(slot, entry);
    return entry;
  }

  /** Holds `messages` as the value at `key`; `appendDepth` as {@link HeldList} says. */
  set(key: BlobKey, messages: readonly BaseMessage[], appendDepth: number): void {
    const slot = slotOf(key);
    this.lists.delete(slot);
    this.lists.set(slot, { version: key.version, messages: [...messages], appendDepth });
    for (const oldest of this.lists.keys()) {
      if (this.lists.size <= this.maxLists) break;
      this.lists.delete(oldest);
    }
  }

  /** Like `set`, but only when nothing is kept for that channel yet (reading history must not evict the latest). */
  offer(key: BlobKey, messages: readonly BaseMessage[], appendDepth: number): void {
    if (!this.lists.has(slotOf(key))) this.set(key, messages, appendDepth);
  }

  /**
   * What is held for a thread (every namespace and channel): taken before a read, so the read
   * can leave those values out of its result and still have them if they are evicted meanwhile.
   */
  heldFor(threadId: string): Map<string, { key: BlobKey; list: HeldList }> {
    const held = new Map<string, { key: BlobKey; list: HeldList }>();
    const prefix = `${threadId}\u0000`;
    for (const [slot, entry] of this.lists) {
      if (!slot.startsWith(prefix)) continue;
      const [, checkpointNs = '', channel = ''] = slot.split('\u0000');
      held.set(`${slot}\u0000${entry.version}`, { key: { threadId, checkpointNs, channel, version: entry.version }, list: entry });
    }
    return held;
  }

  deleteThread(threadId: string): void {
    const prefix = `${threadId}\u0000`;
    for (const slot of [...this.lists.keys()]) if (slot.startsWith(prefix)) this.lists.delete(slot);
  }
}

/** A held message list and how it is stored. */
export interface HeldList {
  version: string;
  messages: readonly BaseMessage[];
  /** Appended rows between this version and a row holding the whole list (0: it is stored whole). */
  appendDepth: number;
}

/** `heldFor`'s key of a blob. */
export function heldKey(key: BlobKey): string {
  return `${slotOf(key)}\u0000${key.version}`;
}

function slotOf(key: Omit<BlobKey, 'version'>): string {
  return `${key.threadId}\u0000${key.checkpointNs}\u0000${key.channel}`;
}
