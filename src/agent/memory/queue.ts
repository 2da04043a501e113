import type { Logger } from '../../logger.js';
import { settledWithin } from '../../time.js';
import type { MemoryJob } from './types.js';

export interface MemoryQueueOptions {
  /** Quiet time after the last `enqueue` of a thread before its job runs, in ms; 0 runs on the next tick. */
  debounceMs: number;
  /** Does the work. A rejection is logged as a warning and otherwise ignored. */
  run: (job: MemoryJob) => Promise<void>;
  logger: Logger;
}

/** One user's thread: at most one job waiting and one running. */
interface Slot {
  pending: MemoryJob | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The pending job should run as soon as the running one ends (its timer fired, or a flush). */
  isDue: boolean;
  running: Promise<void> | undefined;
}

/**
 * Debounced memory jobs, in process. Jobs are keyed by user and thread: a newer job replaces the
 * waiting one of its key and restarts the wait, so a burst of messages costs one update built
 * from the latest conversation. Keys run independently of each other; the jobs of one key never
 * overlap (a due job waits for the running one). Timers are `unref()`ed and never keep the process
 * alive: call {@link close} on shutdown so the last conversations are not lost.
 *
 * Keyed by user as well as thread because a group chat's thread serves several users: one
 * user's message must not replace another's pending update.
 */
export class MemoryQueue {
  private readonly slots = new Map<string, Slot>();
  private isClosed = false;

  constructor(private readonly options: MemoryQueueOptions) {}

  /** Jobs waiting or running. */
  get size(): number {
    let count = 0;
    for (const slot of this.slots.values()) count += (slot.pending ? 1 : 0) + (slot.running ? 1 : 0);
    return count;
  }

  /**
   * Schedules `job` after the debounce, replacing a waiting job of the same user and thread.
   * Returns false, dropping the job, once {@link close} was called.
   */
  enqueue(job: MemoryJob): boolean {
    if (this.isClosed) {
      this.options.logger.debug({ userId: job.userId, threadId: job.threadId }, 'memory job dropped: queue closed');
      return false;
    }
    const key = `${job.userId}\u0000${job.threadId}`;
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = { pending: undefined, timer: undefined, isDue: false, running: undefined };
      this.slots.set(key, slot);
    }
    clearTimeout(slot.timer);
    slot.pending = job;
    slot.isDue = false;
    const dueSlot = slot;
    slot.timer = setTimeout(() => {
      dueSlot.timer = undefined;
      dueSlot.isDue = true;
      this.startIfIdle(key, dueSlot);
    }, this.options.debounceMs);
    slot.timer.unref();
    return true;
  }

  /** Runs every waiting job now (each after its key's running job) and resolves when all have ended. */
  async flush(): Promise<void> {
    const drains: Promise<void>[] = [];
    for (const [key, slot] of this.slots) {
      if (slot.pending !== undefined) {
        clearTimeout(slot.timer);
        slot.timer = undefined;
        slot.isDue = true;
        this.startIfIdle(key, slot);
      }
      drains.push(this.drain(slot));
    }
    await Promise.all(drains);
  }

  /**
   * Stops accepting jobs, runs the waiting ones and waits for all to end, at most `timeoutMs`.
   * Resolves either way; jobs still unfinished at the timeout are logged and left to run.
   */
  async close(options: { timeoutMs: number }): Promise<void> {
    this.isClosed = true;
    if (!(await settledWithin(this.flush(), options.timeoutMs))) {
      this.options.logger.warn({ unfinishedJobs: this.size, timeoutMs: options.timeoutMs }, 'memory queue closed with jobs unfinished');
    }
  }

  private startIfIdle(key: string, slot: Slot): void {
    if (slot.running !== undefined || !slot.isDue || slot.pending === undefined) return;
    const job = slot.pending;
    slot.pending = undefined;
    slot.isDue = false;
    slot.running = this.runSafely(job).finally(() => {
      slot.running = undefined;
      if (slot.pending === undefined) this.slots.delete(key);
      else this.startIfIdle(key, slot);
    });
  }

  private async runSafely(job: MemoryJob): Promise<void> {
    try {
      await this.options.run(job);
    } catch (error) {
      this.options.logger.warn(
        { userId: job.userId, threadId: job.threadId, error: { name: error instanceof Error ? error.name : typeof error } },
        'memory job failed',
      );
    }
  }

  /** Resolves once the slot has nothing running and nothing due. */
  private async drain(slot: Slot): Promise<void> {
    while (slot.running !== undefined) await slot.running;
  }
}
