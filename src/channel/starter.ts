import { ChannelError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { IngressLease } from './ingress-lease.js';
import type { ChannelAdapter, ChannelStatus } from './types.js';

export interface ChannelStarterOptions {
  logger: Logger;
  /** Wait before the first retry; doubled after each failure up to `maxRetryDelayMs`. Default 5 s. */
  firstRetryDelayMs?: number;
  /** Longest wait between retries. Default 5 min. */
  maxRetryDelayMs?: number;
  /** [0, 1); spreads the retries of several processes. Default `Math.random`. */
  random?: () => number;
  /**
   * Present when several processes share the deployment: a channel with `exclusiveIngress` runs
   * its ingress only in the process holding its lease; the others stand by. The holder renews it,
   * and a standby process tries to take it, three times per lease TTL.
   */
  lease?: IngressLease;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
}

const DEFAULT_FIRST_RETRY_DELAY_MS = 5_000;
const DEFAULT_MAX_RETRY_DELAY_MS = 5 * 60_000;

/** A channel that is not running because of its start, and what happens next. */
interface StartFailure {
  reason: string;
  /** Set while another attempt is scheduled. */
  retryTimer?: ReturnType<typeof setTimeout>;
}

/** Where a channel with exclusive ingress stands in a shared deployment. */
interface LeaseState {
  isHeld: boolean;
  lastRenewedAt: number;
  timer?: ReturnType<typeof setTimeout>;
  /** The start begun when the lease was taken; renewals go on meanwhile (a start may take 30 s). */
  starting?: Promise<void>;
}

/**
 * Starts the channels and keeps trying the ones the platform could not be reached for. One
 * platform refusing us must not take the server down: it is reported not running, with the
 * adapter's reason. A start that failed because the platform was unreachable or timed out
 * (`CHANNEL_UNAVAILABLE`) is tried again with exponential backoff and jitter, so a server that
 * booted during a platform outage (or before its network was up) recovers by itself. Refused
 * credentials and bad configuration stay failed: they need the operator and a restart.
 *
 * Scaled out (`lease` given), a channel whose ingress must be unique (`exclusiveIngress`:
 * Telegram polling, the Discord gateway) starts only in the process holding its lease and is
 * renewed there; the other processes stand by, try to take the lease a few times per TTL, and
 * still deliver replies (egress needs no ingress). A holder that loses its lease stops ingress.
 */
export class ChannelStarter {
  private readonly failures = new Map<string, StartFailure>();
  private readonly leases = new Map<string, LeaseState>();
  private readonly attempts = new Set<Promise<unknown>>();
  private readonly firstAttempts = new Map<string, Promise<void>>();
  /** Channels with a start under way; after a failure, /health keeps showing that failure instead. */
  private readonly startsUnderWay = new Set<string>();
  private isStopped = false;
  private readonly now: () => number;

  constructor(private readonly options: ChannelStarterOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Resolves once every channel had its first attempt (or its first try for the lease). Never rejects. */
  async startAll(adapters: readonly ChannelAdapter[]): Promise<void> {
    await Promise.all(
      adapters.map((adapter) => {
        const first = (async () => {
          if (!adapter.exclusiveIngress || this.options.lease === undefined) return this.attempt(adapter, this.firstRetryDelayMs());
          await this.checkLease(adapter);
          await this.leases.get(adapter.name)?.starting;
        })();
        this.firstAttempts.set(adapter.name, first);
        return first;
      }),
    );
  }

  /**
   * Resolves once the first start of channel `name` has ended, whichever way (at once for a
   * channel `startAll` was not given). The gateway listens while channels still connect; a
   * webhook that arrives meanwhile waits for this rather than meeting a half-started channel.
   */
  async firstStartSettled(name: string): Promise<void> {
    await this.firstAttempts.get(name);
  }

  /** What `/health` shows for `adapter`. */
  status(adapter: ChannelAdapter): ChannelStatus {
    const lease = this.leases.get(adapter.name);
    if (lease !== undefined && !lease.isHeld) {
      return { running: false, standby: true, reason: `standby: another process runs the ${adapter.displayName} connection` };
    }
    const failure = this.failures.get(adapter.name);
    if (failure === undefined) {
      const status = adapter.status();
      // Its first start is under way: the gateway answers before platforms do.
      return !status.running && this.startsUnderWay.has(adapter.name) ? { running: false, reason: 'starting' } : status;
    }
    return { running: false, reason: failure.retryTimer === undefined ? failure.reason : `${failure.reason} (retrying)` };
  }

  /** No more retries or lease checks; resolves once an attempt under way has ended, so the caller can stop the adapters. */
  async stop(): Promise<void> {
    this.isStopped = true;
    for (const failure of this.failures.values()) {
      clearTimeout(failure.retryTimer);
      failure.retryTimer = undefined;
    }
    for (const lease of this.leases.values()) clearTimeout(lease.timer);
    await Promise.allSettled([...this.attempts]);
  }

  /** Gives up the leases this process holds (after its adapters stopped), so another process takes over at once. */
  async releaseLeases(): Promise<void> {
    const { lease } = this.options;
    if (lease === undefined) return;
    await Promise.allSettled([...this.leases].filter(([, state]) => state.isHeld).map(([channel]) => lease.release(channel)));
    await lease.close();
  }

  private firstRetryDelayMs(): number {
    return this.options.firstRetryDelayMs ?? DEFAULT_FIRST_RETRY_DELAY_MS;
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.attempts.add(work);
    void work.finally(() => this.attempts.delete(work)).catch(() => undefined);
    return work;
  }

  private attempt(adapter: ChannelAdapter, delayMs: number): Promise<void> {
    const { logger } = this.options;
    this.startsUnderWay.add(adapter.name);
    const work = adapter.start().finally(() => this.startsUnderWay.delete(adapter.name)).then(
      () => {
        this.failures.delete(adapter.name);
        logger.info({ channel: adapter.name }, 'channel started');
      },
      (error: unknown) => {
        if (this.isStopped) {
          // Stopping the adapter aborted its start: nothing failed, and nothing is retried.
          logger.info({ channel: adapter.name, err: describeError(error) }, 'channel start abandoned: stopping');
          return;
        }
        const reason = adapter.status().reason ?? describeError(error).message;
        const failure: StartFailure = { reason };
        this.failures.set(adapter.name, failure);
        const isTransient = error instanceof ChannelError && error.code === 'CHANNEL_UNAVAILABLE';
        if (!isTransient) {
          logger.error({ channel: adapter.name, err: describeError(error) }, 'channel failed to start');
          return;
        }
        const waitMs = Math.round(delayMs * (0.5 + (this.options.random ?? Math.random)()));
        logger.warn({ channel: adapter.name, err: describeError(error), retryInMs: waitMs }, 'channel failed to start');
        failure.retryTimer = setTimeout(() => {
          failure.retryTimer = undefined;
          // A standby process does not start ingress, whatever failed while it held the lease.
          if (this.leases.get(adapter.name)?.isHeld === false) return;
          void this.attempt(adapter, Math.min(delayMs * 2, this.options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS));
        }, waitMs);
        failure.retryTimer.unref();
      },
    );
    return this.track(work);
  }

  /** One lease check: take it (and start), renew it, or step down when it is gone. Schedules the next. */
  private checkLease(adapter: ChannelAdapter): Promise<void> {
    const lease = this.options.lease as IngressLease;
    const state = this.leases.get(adapter.name) ?? { isHeld: false, lastRenewedAt: 0 };
    this.leases.set(adapter.name, state);
    const work = (async () => {
      let holds: boolean;
      try {
        holds = state.isHeld ? await lease.renew(adapter.name) : await lease.acquire(adapter.name);
        if (holds) state.lastRenewedAt = this.now();
      } catch (error) {
        // Redis unreachable: keep going while the lease surely has not run out, then step down.
        holds = state.isHeld && this.now() - state.lastRenewedAt < lease.ttlMs / 2;
        this.options.logger.warn({ channel: adapter.name, err: describeError(error), holds }, 'ingress lease not checked');
      }
      if (holds && !state.isHeld && !this.isStopped) {
        state.isHeld = true;
        this.options.logger.info({ channel: adapter.name }, 'ingress lease taken; starting the channel');
        state.starting = this.attempt(adapter, this.firstRetryDelayMs());
      } else if (!holds && state.isHeld) {
        state.isHeld = false;
        this.options.logger.warn({ channel: adapter.name }, 'ingress lease lost; stopping the channel');
        // A start under way finishes first, so the stop below is not overtaken by it.
        await state.starting;
        clearTimeout(this.failures.get(adapter.name)?.retryTimer);
        this.failures.delete(adapter.name);
        await adapter.stop().catch((error: unknown) => this.options.logger.warn({ channel: adapter.name, err: describeError(error) }, 'channel did not stop cleanly'));
      }
    })();
    return this.track(work).finally(() => {
      if (this.isStopped) return;
      state.timer = setTimeout(() => void this.checkLease(adapter), lease.ttlMs / 3);
      state.timer.unref();
    });
  }
}
