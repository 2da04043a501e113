import { Redis } from 'ioredis';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { IntervalBudget } from './interval-budget.js';
import type { RateGate } from './rate-gate.js';
import { SharedLimits } from './shared-limits.js';

export interface RedisLimitsOptions {
  url: string;
  /** The pub/sub channel of one deployment, e.g. `deerflow:limits`. */
  channel: string;
  logger: Logger;
}

/**
 * {@link SharedLimits} over Redis pub/sub, with two connections per process opened with the
 * first gate or budget: one publishes notices, one receives them. Nothing waits on Redis: a
 * notice that cannot go out now is dropped, never queued (arriving after an outage, it would
 * block for longer than the platform asked, counted from its late arrival).
 */
export class RedisLimits {
  private readonly limits: SharedLimits;
  private connections: { publisher: Redis; subscriber: Redis } | undefined;
  private isClosed = false;

  constructor(private readonly options: RedisLimitsOptions) {
    this.limits = new SharedLimits({ broadcast: (payload) => this.publish(payload) });
  }

  /** The gate of `platform` named `name`, shared by every process; see {@link SharedLimits.rateGate}. */
  rateGate(platform: string, name: string): RateGate {
    this.connect();
    return this.limits.rateGate(platform, name);
  }

  /** The budget of `platform` named `name`, shared by every process; see {@link SharedLimits.intervalBudget}. */
  intervalBudget(platform: string, name: string, intervalMs: number): IntervalBudget {
    this.connect();
    return this.limits.intervalBudget(platform, name, intervalMs);
  }

  /** Closes both connections; gates and budgets go on as this process's alone. */
  async close(): Promise<void> {
    this.isClosed = true;
    this.connections?.publisher.disconnect();
    this.connections?.subscriber.disconnect();
  }

  private publish(payload: string): void {
    this.connections?.publisher.publish(this.options.channel, payload).catch(() => undefined);
  }

  private connect(): void {
    if (this.connections !== undefined || this.isClosed) return;
    const { url, channel, logger } = this.options;
    // Fails at once while Redis is away, and never sends again what a dropped connection left
    // unanswered: a notice is worth sending now or not at all.
    const publisher = new Redis(url, { enableOfflineQueue: false, autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 });
    // No per-command limit: the SUBSCRIBE waits for Redis however long it is away, and ioredis
    // subscribes again after every reconnect.
    const subscriber = new Redis(url, { maxRetriesPerRequest: null });
    // The request windows' connection already warns about an outage; these would repeat it.
    for (const connection of [publisher, subscriber]) {
      connection.on('error', (error: unknown) => logger.debug({ err: describeError(error) }, 'Redis connection error (shared rate limits)'));
    }
    subscriber.on('message', (_channel: string, payload: string) => this.limits.receive(payload));
    subscriber.subscribe(channel).catch((error: unknown) => {
      if (!this.isClosed) logger.warn({ err: describeError(error) }, 'shared rate limits not subscribed: 429s other processes meet are not seen here');
    });
    this.connections = { publisher, subscriber };
  }
}
