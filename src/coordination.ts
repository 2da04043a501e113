import { Redis } from 'ioredis';
import { InProcessBus } from './bus/in-process.js';
import { RedisBus } from './bus/redis.js';
import type { InboundBus } from './bus/types.js';
import { type IngressLease, RedisIngressLease } from './channel/ingress-lease.js';
import { InProcessRequestWindow, RedisRequestWindow } from './channel/request-window.js';
import type { RequestWindow } from './channel/types.js';
import type { Config } from './config/index.js';
import { describeError } from './errors.js';
import type { Logger } from './logger.js';

/** How long a process holds a channel's exclusive ingress without renewing; a dead holder is replaced this soon. */
const INGRESS_LEASE_TTL_MS = 15_000;

/**
 * How the processes of a deployment share work: alone on the embedded default, or through Redis
 * (`redis.url`) when scaled out. The one place that chooses; everything else sees interfaces.
 */
export interface Coordination {
  kind: 'in-process' | 'redis';
  /** Where ingress puts inbound messages and the workers take them from. */
  bus: InboundBus;
  /** Present when scaled out: who runs a channel's exclusive ingress. */
  lease?: IngressLease;
  /** A request budget of `platform` named `name`, shared by every process when scaled out. */
  requestWindow(platform: string, name: string, perWindow: number, windowMs: number): RequestWindow;
  /** Closes what `close` of the bus and the lease do not (the request windows' connection). */
  close(): Promise<void>;
}

export function createCoordination(config: Config, logger: Logger): Coordination {
  const busOptions = {
    maxQueued: config.channels.inbound_queue_maxsize,
    concurrency: config.channels.max_concurrency,
    logger: logger.child({ component: 'bus' }),
  };
  const { url, key_prefix: prefix, handover_seconds: handoverSeconds } = config.redis;
  if (url === undefined) {
    return {
      kind: 'in-process',
      bus: new InProcessBus(busOptions),
      requestWindow: (_platform, _name, perWindow, windowMs) => new InProcessRequestWindow(perWindow, windowMs),
      close: async () => undefined,
    };
  }
  // Request budgets fail open and fast: a Redis outage must not hold replies back.
  const windows = new Redis(url, { maxRetriesPerRequest: 1 });
  windows.on('error', (error: unknown) => logger.warn({ err: describeError(error) }, 'Redis connection error (request budgets)'));
  return {
    kind: 'redis',
    bus: new RedisBus({ ...busOptions, url, prefix, handoverMs: handoverSeconds * 1000 }),
    lease: new RedisIngressLease(url, prefix, INGRESS_LEASE_TTL_MS),
    requestWindow: (platform, name, perWindow, windowMs) => new RedisRequestWindow(windows, `${prefix}:window:${platform}:${name}`, perWindow, windowMs),
    close: async () => {
      await windows.quit().catch(() => undefined);
    },
  };
}
