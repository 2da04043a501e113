import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * Who runs a channel's exclusive ingress (Telegram polling, the Discord gateway) when several
 * processes share a deployment: a lease with an expiry, renewed while held. A process that dies
 * stops renewing, and another takes over once the lease ran out.
 */
export interface IngressLease {
  /** How long a lease lasts without a renewal: a dead holder is replaced this soon. */
  readonly ttlMs: number;
  /** Takes the lease for `channel` unless another process holds it; true when this process holds it now. */
  acquire(channel: string): Promise<boolean>;
  /** Extends the lease; false when this process no longer holds it (it ran out and another took it). */
  renew(channel: string): Promise<boolean>;
  /** Gives the lease up if this process holds it, so another process takes over at once. */
  release(channel: string): Promise<void>;
  close(): Promise<void>;
}

// Only the holder may extend or drop the key: compare the value first, atomically.
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/** Leases as Redis keys `<prefix>:ingress:<channel>` holding this process's random token. */
export class RedisIngressLease implements IngressLease {
  private readonly redis: Redis;
  /** This process, as the lease values name it. */
  readonly holder = randomUUID();

  constructor(
    url: string,
    private readonly prefix: string,
    readonly ttlMs: number,
  ) {
    // Fail fast: a lease call that cannot reach Redis must not wait for a reconnect.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
    this.redis.on('error', () => undefined);
  }

  async acquire(channel: string): Promise<boolean> {
    const answer = await this.redis.set(this.keyOf(channel), this.holder, 'PX', this.ttlMs, 'NX');
    if (answer === 'OK') return true;
    return (await this.redis.get(this.keyOf(channel))) === this.holder;
  }

  async renew(channel: string): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, this.keyOf(channel), this.holder, String(this.ttlMs))) === 1;
  }

  async release(channel: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.keyOf(channel), this.holder);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }

  private keyOf(channel: string): string {
    return `${this.prefix}:ingress:${channel}`;
  }
}
