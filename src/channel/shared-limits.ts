import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type Sleep, sleep } from '../time.js';
import type { IntervalBudget } from './interval-budget.js';
import { InProcessRateGate, type RateGate } from './rate-gate.js';
import { StaleKeySweeper } from './stale-keys.js';

/**
 * Rate gates and interval budgets kept in step across processes (scaled out). Each process
 * reads its own mirror, synchronously: egress checks them before every request, and a round
 * trip to Redis there would hold every reply back (and with Redis down, hold it forever). A
 * `block` or a `take` updates the mirror at once and tells every other process in a notice
 * carrying the *remaining* milliseconds, counted again from when it arrives, so the processes'
 * clocks need not agree. A notice only ever extends a mirror, never shortens it.
 *
 * What this does not do:
 * - A process that starts later does not hear of earlier blocks (nor of one sent while its
 *   connection was down). It meets the 429 itself, and from then on every process knows.
 * - Two processes taking a budget slot within the time a notice needs to cross both send. Both
 *   takes are counted wherever they are heard of, so the next slots move back and the rate
 *   over time holds; the platform's 429, if it comes, is honoured and shared like any other.
 *   Each process waits a random fraction of a slot more ({@link STAGGER_FRACTION}) so waiting
 *   processes do not all wake at the same moment and collide on every slot.
 */

/** Share of a budget's interval a process may add to its wait at the start of a slot, at random. */
export const STAGGER_FRACTION = 0.1;

const noticeSchema = z.object({
  /** The process that sent it (each ignores its own). */
  from: z.string(),
  /** `block`: a gate's key closed (a 429 with retry-after); `take`: a budget's slot was used. */
  kind: z.enum(['block', 'take']),
  platform: z.string(),
  name: z.string(),
  key: z.string(),
  /** Gate: how long the key stays closed; budget: until the sender's next free slot. */
  remainingMs: z.number().finite().nonnegative(),
});

type Notice = z.infer<typeof noticeSchema>;

export interface SharedLimitsOptions {
  /**
   * Hands a notice to every other process. Must neither throw nor wait: with the transport
   * down it drops the notice, and the mirrors go on alone (fail open).
   */
  broadcast(payload: string): void;
  /** Milliseconds since the epoch; default `Date.now`. */
  now?: () => number;
  /** Default {@link sleep}. */
  sleep?: Sleep;
  /** In [0, 1); default `Math.random`. Spreads the start of a slot between processes. */
  random?: () => number;
  /** This process in notices; default a random UUID. */
  processId?: string;
}

/** One process's mirrors of the shared gates and budgets, by platform and name. */
export class SharedLimits {
  private readonly gates = new Map<string, SharedRateGate>();
  private readonly budgets = new Map<string, SharedIntervalBudget>();
  private readonly processId: string;
  private readonly now: () => number;

  constructor(private readonly options: SharedLimitsOptions) {
    this.processId = options.processId ?? randomUUID();
    this.now = options.now ?? Date.now;
  }

  /** The gate of `platform` named `name`; the same object for the same names. */
  rateGate(platform: string, name: string): RateGate {
    const id = idOf(platform, name);
    let gate = this.gates.get(id);
    if (gate === undefined) {
      const local = new InProcessRateGate({ now: this.now, sleep: this.options.sleep ?? sleep });
      gate = new SharedRateGate(local, this.now, (key, remainingMs) => this.send({ kind: 'block', platform, name, key, remainingMs }));
      this.gates.set(id, gate);
    }
    return gate;
  }

  /** The budget of `platform` named `name`; the same object for the same names (with the first call's interval). */
  intervalBudget(platform: string, name: string, intervalMs: number): IntervalBudget {
    const id = idOf(platform, name);
    let budget = this.budgets.get(id);
    if (budget === undefined) {
      budget = new SharedIntervalBudget({
        intervalMs,
        now: this.now,
        random: this.options.random ?? Math.random,
        announce: (key, remainingMs) => this.send({ kind: 'take', platform, name, key, remainingMs }),
      });
      this.budgets.set(id, budget);
    }
    return budget;
  }

  /**
   * Applies another process's notice to this process's mirror. Never throws: its own notices,
   * malformed ones and those for a gate or budget this process has not created are ignored.
   */
  receive(payload: string): void {
    let notice: Notice;
    try {
      notice = noticeSchema.parse(JSON.parse(payload));
    } catch {
      return;
    }
    if (notice.from === this.processId) return;
    const id = idOf(notice.platform, notice.name);
    if (notice.kind === 'block') this.gates.get(id)?.blockedElsewhere(notice.key, notice.remainingMs);
    else this.budgets.get(id)?.takenElsewhere(notice.key, notice.remainingMs);
  }

  private send(notice: Omit<Notice, 'from'>): void {
    this.options.broadcast(JSON.stringify({ from: this.processId, ...notice }));
  }
}

const idOf = (platform: string, name: string): string => `${platform}:${name}`;

/** A gate whose blocks this process and every other one see. */
class SharedRateGate implements RateGate {
  constructor(
    private readonly local: InProcessRateGate,
    private readonly now: () => number,
    private readonly announce: (key: string, remainingMs: number) => void,
  ) {}

  block(key: string, ms: number): void {
    this.local.block(key, ms);
    const until = this.local.blockedUntil(key);
    // What the mirror now holds, which may be longer than `ms`.
    if (until !== undefined) this.announce(key, until - this.now());
  }

  /** Another process met a 429: closes `key` here too, unless it already is for longer. */
  blockedElsewhere(key: string, remainingMs: number): void {
    this.local.block(key, remainingMs);
  }

  isOpen(key: string): boolean {
    return this.local.isOpen(key);
  }

  blockedUntil(key: string): number | undefined {
    return this.local.blockedUntil(key);
  }

  // Waits again when a notice extended the block meanwhile (the local gate looks after each sleep).
  waitUntilOpen(key: string, signal?: AbortSignal): Promise<void> {
    return this.local.waitUntilOpen(key, signal);
  }
}

interface Slot {
  /** When the next request may go out, by the budget. */
  nextFreeAt: number;
  /** This process's extra wait for that slot (see {@link STAGGER_FRACTION}). */
  staggerMs: number;
}

/**
 * A budget whose slots every process counts: a take here or elsewhere moves the next free slot
 * back by one interval, and never before the next free slot the taker knew of.
 */
class SharedIntervalBudget implements IntervalBudget {
  private readonly slots = new Map<string, Slot>();
  /** Forgets keys whose slot is free again. */
  private readonly sweeper = new StaleKeySweeper();

  constructor(
    private readonly options: { intervalMs: number; now: () => number; random: () => number; announce: (key: string, remainingMs: number) => void },
  ) {}

  waitMs(key: string): number {
    const slot = this.slots.get(key);
    if (slot === undefined) return 0;
    const waitMs = slot.nextFreeAt + slot.staggerMs - this.options.now();
    if (waitMs > 0) return waitMs;
    this.slots.delete(key);
    return 0;
  }

  tryTake(key: string): boolean {
    if (this.waitMs(key) > 0) return false;
    this.take(key);
    return true;
  }

  take(key: string): void {
    const now = this.options.now();
    const nextFreeAt = this.afterOneMore(key, now);
    this.set(key, nextFreeAt);
    this.options.announce(key, nextFreeAt - now);
  }

  /**
   * Another process took a slot: one fewer here too. Counting it (rather than only adopting the
   * sender's next free slot) keeps two takes that crossed from being counted as one.
   */
  takenElsewhere(key: string, remainingMs: number): void {
    const now = this.options.now();
    this.set(key, Math.max(this.afterOneMore(key, now), now + remainingMs));
  }

  private afterOneMore(key: string, now: number): number {
    return Math.max(now, this.slots.get(key)?.nextFreeAt ?? 0) + this.options.intervalMs;
  }

  private set(key: string, nextFreeAt: number): void {
    const now = this.options.now();
    this.sweeper.beforeAdd(this.slots, (slot) => slot.nextFreeAt + slot.staggerMs <= now);
    this.slots.set(key, { nextFreeAt, staggerMs: this.options.random() * this.options.intervalMs * STAGGER_FRACTION });
  }
}
