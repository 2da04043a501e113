import type { Reply } from '../channel/types.js';
import { MESSAGES } from './messages.js';

/**
 * Reference §4.7 "serialize thread runs" (Feishu): a message for a thread that is already
 * answering another waits its turn instead of being refused as busy. The waiting reply shows
 * that it is queued, then that it started. Turns of one thread run in arrival order; the lock of
 * a thread is forgotten once nobody waits. In-process; across processes the manager also waits
 * for the thread's run in another process before its turn (polling the runtime), so only two
 * turns starting in the same second in two processes can still meet "busy".
 */
export class ThreadTurns {
  /** Per thread, the end of the last turn in line. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `turn` once every earlier turn of `key` has ended; a waiting reply says so. */
  async run<T>(key: string, reply: Reply, turn: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const tail = (before ?? Promise.resolve()).then(() => mine);
    this.tails.set(key, tail);
    try {
      if (before) {
        reply.update(MESSAGES.queuedBehind);
        await before;
        reply.update(MESSAGES.queuedStarted);
      }
      return await turn();
    } finally {
      done();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Threads with a turn running or waiting (for tests). */
  get size(): number {
    return this.tails.size;
  }
}
