import { InProcessBus } from './bus/in-process.js';
import type { InboundBus } from './bus/types.js';
import type { IngressLease } from './channel/ingress-lease.js';
import { InProcessIntervalBudget, type IntervalBudget } from './channel/interval-budget.js';
import { InProcessRateGate, type RateGate } from './channel/rate-gate.js';
import { InProcessRequestWindow } from './channel/request-window.js';
import { InProcessTopic, type Topic } from './channel/topic.js';
import type { RequestWindow } from './channel/types.js';
import type { Config } from './config/index.js';
import type { Logger } from './logger.js';

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
  /**
   * The 429 gate of `platform` named `name` (Slack: `workspace`, Telegram: `chat`). Scaled out, a
   * block one process met closes the gate in every process (see `src/channel/shared-limits.ts`:
   * reads stay synchronous, from this process's mirror). Call once per name and share the gate.
   */
  rateGate(platform: string, name: string): RateGate;
  /**
   * The budget of `platform` named `name` of one request per `intervalMs` per key (Slack:
   * `chat.update`, 1200 ms a workspace). Scaled out, a slot one process took is taken in every
   * process. Call once per name and share the budget.
   */
  intervalBudget(platform: string, name: string, intervalMs: number): IntervalBudget;
  /** Live events of `platform` named `name`, reaching every process when scaled out. Call once per name. */
  topic(platform: string, name: string): Topic;
  /** Closes what `close` of the bus and the lease do not (the connections of the request windows and rate limits). */
  close(): Promise<void>;
}

export async function createCoordination(config: Config, logger: Logger): Promise<Coordination> {
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
      rateGate: () => new InProcessRateGate(),
      intervalBudget: (_platform, _name, intervalMs) => new InProcessIntervalBudget(intervalMs),
      topic: () => new InProcessTopic(),
      close: async () => undefined,
    };
  }
  // Loaded only when scaled out: BullMQ and ioredis are a tenth of an idle server's memory.
  const { createRedisCoordination } = await import('./redis-coordination.js');
  return createRedisCoordination({ url, prefix, handoverMs: handoverSeconds * 1000, busOptions, logger });
}
