import { ChannelError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ChannelAdapter, ChannelStatus } from './types.js';

export interface ChannelStarterOptions {
  logger: Logger;
  /** Wait before the first retry; doubled after each failure up to `maxRetryDelayMs`. Default 5 s. */
  firstRetryDelayMs?: number;
  /** Longest wait between retries. Default 5 min. */
  maxRetryDelayMs?: number;
  /** [0, 1); spreads the retries of several processes. Default `Math.random`. */
  random?: () => number;
}

const DEFAULT_FIRST_RETRY_DELAY_MS = 5_000;
const DEFAULT_MAX_RETRY_DELAY_MS = 5 * 60_000;

/** A channel that is not running because of its start, and what happens next. */
interface StartFailure {
  reason: string;
  /** Set while another attempt is scheduled. */
  retryTimer?: ReturnType<typeof setTimeout>;
  delayMs: number;
}

/**
 * Starts the channels and keeps trying the ones the platform could not be reached for. One
 * platform refusing us must not take the server down: it is reported not running, with the
 * adapter's reason. A start that failed because the platform was unreachable or timed out
 * (`CHANNEL_UNAVAILABLE`) is tried again with exponential backoff and jitter, so a server that
 * booted during a platform outage (or before its network was up) recovers by itself. Refused
 * credentials and bad configuration stay failed: they need the operator and a restart.
 */
export class ChannelStarter {
  private readonly failures = new Map<string, StartFailure>();
  private readonly attempts = new Set<Promise<void>>();
  private isStopped = false;

  constructor(private readonly options: ChannelStarterOptions) {}

  /** Resolves once every channel had its first attempt. Never rejects. */
  async startAll(adapters: readonly ChannelAdapter[]): Promise<void> {
    await Promise.all(adapters.map((adapter) => this.attempt(adapter, this.options.firstRetryDelayMs ?? DEFAULT_FIRST_RETRY_DELAY_MS)));
  }

  /** What `/health` shows for `adapter`. */
  status(adapter: ChannelAdapter): ChannelStatus {
    const failure = this.failures.get(adapter.name);
    if (failure === undefined) return adapter.status();
    return { running: false, reason: failure.retryTimer === undefined ? failure.reason : `${failure.reason} (retrying)` };
  }

  /** No more retries; resolves once an attempt under way has ended, so the caller can stop the adapters. */
  async stop(): Promise<void> {
    this.isStopped = true;
    for (const failure of this.failures.values()) {
      clearTimeout(failure.retryTimer);
      failure.retryTimer = undefined;
    }
    await Promise.allSettled([...this.attempts]);
  }

  private attempt(adapter: ChannelAdapter, delayMs: number): Promise<void> {
    const { logger } = this.options;
    const work = adapter.start().then(
      () => {
        this.failures.delete(adapter.name);
        logger.info({ channel: adapter.name }, 'channel started');
      },
      (error: unknown) => {
        const reason = adapter.status().reason ?? describeError(error).message;
        const failure: StartFailure = { reason, delayMs };
        this.failures.set(adapter.name, failure);
        const isTransient = error instanceof ChannelError && error.code === 'CHANNEL_UNAVAILABLE';
        if (!isTransient || this.isStopped) {
          logger.error({ channel: adapter.name, err: describeError(error) }, 'channel failed to start');
          return;
        }
        const waitMs = Math.round(delayMs * (0.5 + (this.options.random ?? Math.random)()));
        logger.warn({ channel: adapter.name, err: describeError(error), retryInMs: waitMs }, 'channel failed to start');
        failure.retryTimer = setTimeout(() => {
          failure.retryTimer = undefined;
          void this.attempt(adapter, Math.min(delayMs * 2, this.options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS));
        }, waitMs);
        failure.retryTimer.unref();
      },
    );
    this.attempts.add(work);
    void work.finally(() => this.attempts.delete(work));
    return work;
  }
}
