import { type Sleep, sleep } from '../time.js';
import { StaleKeySweeper } from './stale-keys.js';

/**
 * Per-key "do not send before" times. When a platform answers 429 with a retry-after, egress
 * blocks the key (usually a chat) and every later request to it waits; platforms punish
 * clients that ignore the signal (Telegram: "hitting rate limits does not lead to bans.
 * Ignoring them does", https://grammy.dev/advanced/flood).
 */
export interface RateGate {
  /**
   * Closes `key` for `ms` milliseconds from now; never shortens an existing block. Scaled out
   * (`Coordination.rateGate`), every process's gate of the same name closes too.
   */
  block(key: string, ms: number): void;
  /** Whether a request for `key` may go out now. */
  isOpen(key: string): boolean;
  /** Milliseconds since the epoch until which `key` is closed; `undefined` when open. */
  blockedUntil(key: string): number | undefined;
  /**
   * Resolves once `key` is open, waiting again if the block is extended meanwhile. Rejects with
   * the signal's reason when `signal` aborts first.
   */
  waitUntilOpen(key: string, signal?: AbortSignal): Promise<void>;
}

export interface InProcessRateGateOptions {
  /** Milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
  /** Default {@link sleep}. */
  sleep?: Sleep;
}

/**
 * A {@link RateGate} held in this process's memory: the embedded default, and each process's
 * mirror of a shared gate. Expired entries are forgotten when next looked at, and all of them
 * once many keys piled up (a mirror hears of blocks on chats it never sends to).
 */
export class InProcessRateGate implements RateGate {
  private readonly until = new Map<string, number>();
  private readonly now: () => number;
  private readonly sleep: Sleep;
  /** Forgets keys open again. */
  private readonly sweeper = new StaleKeySweeper();

  constructor(options: InProcessRateGateOptions = {}) {
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? sleep;
  }

  block(key: string, ms: number): void {
    const now = this.now();
    this.sweeper.beforeAdd(this.until, (until) => until <= now);
    const until = now + Math.max(0, ms);
    if (until > (this.until.get(key) ?? 0)) this.until.set(key, until);
  }

  isOpen(key: string): boolean {
    return this.blockedUntil(key) === undefined;
  }

  blockedUntil(key: string): number | undefined {
    const until = this.until.get(key);
    if (until === undefined) return undefined;
    if (until <= this.now()) {
      this.until.delete(key);
      return undefined;
    }
    return until;
  }

  async waitUntilOpen(key: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    for (let until = this.blockedUntil(key); until !== undefined; until = this.blockedUntil(key)) {
      await this.sleep(until - this.now(), signal);
    }
  }
}
