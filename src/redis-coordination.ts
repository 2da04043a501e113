import { Redis } from 'ioredis';
import { RedisBus, type RedisBusOptions } from './bus/redis.js';
import { RedisIngressLease } from './channel/ingress-lease.js';
import { RedisLimits } from './channel/redis-limits.js';
import { RedisTopics } from './channel/redis-topics.js';
import { RedisRequestWindow } from './channel/request-window.js';
import type { Coordination } from './coordination.js';
import { describeError } from './errors.js';
import type { Logger } from './logger.js';

/** How long a process holds a channel's exclusive ingress without renewing; a dead holder is replaced this soon. */
const INGRESS_LEASE_TTL_MS = 15_000;

export interface RedisCoordinationOptions {
  url: string;
  /** Prefix of every key and queue name (`redis.key_prefix`). */
  prefix: string;
  /** How long a stopping process's jobs wait before another takes them (`redis.handover_seconds`). */
  handoverMs: number;
  busOptions: Pick<RedisBusOptions, 'maxQueued' | 'concurrency' | 'logger'>;
  logger: Logger;
}

/**
 * Scaled out (`redis.url`): one BullMQ queue shared by every process, leases for exclusive
 * ingress, shared request budgets, 429 gates, interval budgets and live events.
 */
export function createRedisCoordination(options: RedisCoordinationOptions): Coordination {
  const { url, prefix, logger } = options;
  // Request budgets fail open and fast: a Redis outage must not hold replies back.
  const windows = new Redis(url, { maxRetriesPerRequest: 1 });
  windows.on('error', (error: unknown) => logger.warn({ err: describeError(error) }, 'Redis connection error (request budgets)'));
  const limits = new RedisLimits({ url, channel: `${prefix}:limits`, logger });
  const topics = new RedisTopics({ url, prefix, logger });
  return {
    kind: 'redis',
    bus: new RedisBus({ ...options.busOptions, url, prefix, handoverMs: options.handoverMs }),
    lease: new RedisIngressLease(url, prefix, INGRESS_LEASE_TTL_MS),
    requestWindow: (platform, name, perWindow, windowMs) => new RedisRequestWindow(windows, `${prefix}:window:${platform}:${name}`, perWindow, windowMs),
    rateGate: (platform, name) => limits.rateGate(platform, name),
    intervalBudget: (platform, name, intervalMs) => limits.intervalBudget(platform, name, intervalMs),
    topic: (platform, name) => topics.topic(platform, name),
    close: async () => {
      await limits.close();
      await topics.close();
      await windows.quit().catch(() => undefined);
    },
  };
}
