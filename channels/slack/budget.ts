import type { IntervalBudget } from '../../src/channel/interval-budget.js';
import { InProcessRateGate, type RateGate } from '../../src/channel/rate-gate.js';
import { type Sleep, sleep } from '../../src/time.js';

/**
 * The workspace's key in the shared gate and budgets: one bot token is one workspace, and Slack's
 * tiers count "per API method per workspace per app"
 * (https://docs.slack.dev/apis/web-api/rate-limits), so every reply into it shares them. Gate and
 * budgets come from core (`deps.rateGate`, `deps.intervalBudget`): scaled out, every process's
 * replies share them too.
 */
export const WORKSPACE_KEY = 'workspace';

/**
 * The gate one edit-style reply sees: its own blocks (rate limits it met), the workspace's shared
 * gate and, until `isFinal()`, the workspace's update budget. So a partial waits for a free
 * slot instead of being sent and refused; a final waits only for real rate limits.
 */
export class ReplyGate implements RateGate {
  private readonly own: InProcessRateGate;

  constructor(
    private readonly options: { shared: RateGate; budget: IntervalBudget; isFinal: () => boolean; now: () => number; sleep?: Sleep },
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
