import { StaleKeySweeper } from './stale-keys.js';

/**
 * One request per `intervalMs` per key: the pacing of a platform whose budget is a steady rate
 * rather than a window (Slack's tiers count "per API method per workspace per app",
 * https://docs.slack.dev/apis/web-api/rate-limits, so every reply into a workspace shares one).
 * Reads and takes are synchronous: callers check it on hot paths (each partial of a stream).
 * Shared by every process when scaled out (`Coordination.intervalBudget`).
 */
export interface IntervalBudget {
  /** Milliseconds until `key` has a free slot; 0 when one is free now. */
  waitMs(key: string): number;
  /** Takes the slot if one is free now; returns false (taking nothing) otherwise. */
  tryTake(key: string): boolean;
  /** Takes a slot even when none is free (a final must go out): later requests wait longer. */
  take(key: string): void;
}

/** The embedded default: the budget of this process's requests, in memory. */
export class InProcessIntervalBudget implements IntervalBudget {
  private readonly nextFreeAt = new Map<string, number>();
  /** Forgets keys whose slot is free again. */
  private readonly sweeper = new StaleKeySweeper();

  constructor(
    private readonly intervalMs: number,
    /** Milliseconds since the epoch; default `Date.now`. */
    private readonly now: () => number = Date.now,
  ) {}

  waitMs(key: string): number {
    return Math.max(0, (this.nextFreeAt.get(key) ?? 0) - this.now());
  }

  tryTake(key: string): boolean {
    if (this.waitMs(key) > 0) return false;
    this.take(key);
    return true;
  }

  take(key: string): void {
    const now = this.now();
    this.sweeper.beforeAdd(this.nextFreeAt, (at) => at <= now);
    const from = Math.max(now, this.nextFreeAt.get(key) ?? 0);
    this.nextFreeAt.set(key, from + this.intervalMs);
  }
}
