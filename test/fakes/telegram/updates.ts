import type { ServerResponse } from 'node:http';
import type { Update } from 'grammy/types';
import { ApiFailure } from './chats.js';

const CONFLICT = 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running';
/** getUpdates `limit`: 1-100, default 100 (https://core.telegram.org/bots/api#getupdates). */
const MAX_LIMIT = 100;

interface PollWaiter {
  finish(result: Update[] | ApiFailure): void;
}

/** The bot's pending updates and the one getUpdates request that may be held open for them. */
export class UpdateQueue {
  private updates: Update[] = [];
  private nextUpdateId = 10_000;
  private poll: PollWaiter | undefined;

  /** Queues an update (its id is assigned here) and wakes a held getUpdates. */
  push(update: Omit<Update, 'update_id'>): Update {
    const full = { update_id: this.nextUpdateId++, ...update } as Update;
    this.updates.push(full);
    this.poll?.finish(this.updates);
    return full;
  }

  /** Updates the bot has not confirmed yet (getUpdates has not asked past them). */
  get unconfirmed(): number {
    return this.updates.length;
  }

  /** deleteWebhook `drop_pending_updates`. */
  clear(): void {
    this.updates = [];
  }

  /** Answers a held getUpdates with `[]`. */
  release(): void {
    this.poll?.finish([]);
  }

  /**
   * Real long polling: confirms (forgets) updates below `offset`, answers at once when updates
   * are waiting or `timeout` is 0, else holds the request up to `timeout` seconds. A newer
   * getUpdates ends a held one with 409, as Telegram does.
   */
  getUpdates(params: Record<string, unknown>, res: ServerResponse): Update[] | Promise<Update[]> {
    const offset = typeof params.offset === 'number' ? params.offset : undefined;
    const limit = Math.min(MAX_LIMIT, Math.max(1, typeof params.limit === 'number' ? params.limit : MAX_LIMIT));
    const timeoutSeconds = typeof params.timeout === 'number' ? params.timeout : 0;
    // "An update is considered confirmed as soon as getUpdates is called with an offset higher
    // than its update_id"; a negative offset keeps only the last -offset updates.
    if (offset !== undefined) {
      this.updates = offset < 0 ? this.updates.slice(offset) : this.updates.filter((u) => u.update_id >= offset);
    }
    this.poll?.finish(new ApiFailure(409, CONFLICT));
    if (this.updates.length > 0 || timeoutSeconds <= 0) return this.updates.slice(0, limit);
    return new Promise<Update[]>((resolve, reject) => {
      let isDone = false;
      const waiter: PollWaiter = {
        finish: (result) => {
          if (isDone) return;
          isDone = true;
          clearTimeout(timer);
          if (this.poll === waiter) this.poll = undefined;
          if (result instanceof ApiFailure) reject(result);
          else resolve(result.slice(0, limit));
        },
      };
      const timer = setTimeout(() => waiter.finish([]), timeoutSeconds * 1000);
      // The client gave up (grammY aborts the poll on stop): forget the waiter.
      res.on('close', () => waiter.finish([]));
      this.poll = waiter;
    });
  }
}
