import { InProcessRateGate, type RateGate } from '../../src/channel/rate-gate.js';
import { type Sleep, sleep } from '../../src/time.js';

/** The workspace's key in the shared gate and budgets: one bot token is one workspace. */
export const WORKSPACE_KEY = 'workspace';

/**
 * One request per `intervalMs` for a whole workspace: Slack's tiers count "per API method per
 * workspace per app" (https://docs.slack.dev/apis/web-api/rate-limits), so every reply
 * streaming into a workspace shares one budget. In-process: right for the one process that
 * holds a workspace's replies (DESIGN: a Redis-backed budget is the scaled-out twin).
 */
export class WorkspaceBudget {
  private readonly nextFreeAt = new Map<string, number>();

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number,
  ) {}

  /** Milliseconds until `key` has a free slot; 0 when one is free now. */
  waitMs(key: string): number {
    return Math.max(0, (this.nextFreeAt.get(key) ?? 0) - this.now());
  }

  /** Takes the slot if one is free now; resolves false (taking nothing) otherwise. */
  tryTake(key: string): boolean {
    if (this.waitMs(key) > 0) return false;
    this.nextFreeAt.set(key, this.now() + this.intervalMs);
    return true;
  }

  /** Takes a slot even when none is free (a final must go out): later requests wait longer. */
  take(key: string): void {
    const from = Math.max(this.now(), this.nextFreeAt.get(key) ?? 0);
    this.nextFreeAt.set(key, from + this.intervalMs);
  }
}

/**
 * The gate one edit-style reply sees: its own blocks (rate limits it met), the workspace's shared
 * gate and, until `isFinal()`, the workspace's update budget. So a partial waits for a free
 * slot instead of being sent and refused; a final waits only for real rate limits.
 */
export class ReplyGate implements RateGate {
  private readonly own: InProcessRateGate;

  constructor(
    private readonly options: { shared: RateGate; budget: WorkspaceBudget; isFinal: () => boolean; now: () => number; sleep?: Sleep },
  ) {
    this.own = new InProcessRateGate({ now: options.now });
  }

  block(key: string, ms: number): void {
    this.own.block(key, ms);
  }

  isOpen(key: string): boolean {
    return this.blockedUntil(key) === undefined;
  }

  blockedUntil(key: string): number | undefined {
    const { shared, budget, isFinal, now } = this.options;
    const budgetWaitMs = isFinal() ? 0 : budget.waitMs(WORKSPACE_KEY);
    const until = Math.max(this.own.blockedUntil(key) ?? 0, shared.blockedUntil(WORKSPACE_KEY) ?? 0, budgetWaitMs > 0 ? now() + budgetWaitMs : 0);
    return until > now() ? until : undefined;
  }

  async waitUntilOpen(key: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const pause = this.options.sleep ?? sleep;
    for (let until = this.blockedUntil(key); until !== undefined; until = this.blockedUntil(key)) {
      await pause(until - this.options.now(), signal);
    }
  }
}
