import type { JsonValue } from './types.js';

/**
 * Live events of one platform, named `name` (the web chat: `replies`), for pages that are open
 * right now: published by whichever process delivers a reply, received by the process holding
 * the page's connection. Best effort: nothing is stored or replayed, so what must survive goes to
 * the database first and an event only says "look again" or carries what is not kept (a partial).
 * In this process on the embedded default, over Redis pub/sub when scaled out.
 */
export interface Topic {
  /** Sends `event` to every listener of `key`, in every process. Never throws, never waits. */
  publish(key: string, event: JsonValue): void;
  /** Calls `listener` with each event published to `key` from now on; returns the way to stop. */
  subscribe(key: string, listener: (event: JsonValue) => void): () => void;
}

/** Listeners by key, in this process: what {@link Topic} implementations deliver to. */
export class TopicListeners {
  private readonly listeners = new Map<string, Set<(event: JsonValue) => void>>();

  subscribe(key: string, listener: (event: JsonValue) => void): () => void {
    let set = this.listeners.get(key);
    if (!set) {
      set = new Set();
      this.listeners.set(key, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  /** Calls each listener of `key`; one that throws does not keep the event from the others. */
  deliver(key: string, event: JsonValue): void {
    for (const listener of [...(this.listeners.get(key) ?? [])]) {
      try {
        listener(event);
      } catch {
        // A listener is a page's connection: its failure is its own.
      }
    }
  }
}

/** The embedded default: events reach this process's listeners, on the next tick (as over Redis). */
export class InProcessTopic implements Topic {
  private readonly listeners = new TopicListeners();

  publish(key: string, event: JsonValue): void {
    queueMicrotask(() => this.listeners.deliver(key, event));
  }

  subscribe(key: string, listener: (event: JsonValue) => void): () => void {
    return this.listeners.subscribe(key, listener);
  }
}
