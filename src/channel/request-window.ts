import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sleep } from '../time.js';
import { StaleKeySweeper } from './stale-keys.js';
import type { RequestWindow, WindowAttempt } from './types.js';

/**
 * Both implementations count a request from its start until `windowMs` after it ended: it reached
 * the platform somewhere in between, so however long requests take, no `windowMs` at the platform
 * sees more than `perWindow` of them. (Counting from the start would let a slow request and the
 * next window's first ones arrive together.) Platforms answer an excess with 429s that block for a
 * second or more, so waiting here is faster than finding out.
 */

/** When only requests under way fill the window, how soon a `tryRun` caller should ask again. */
const IN_FLIGHT_RETRY_MS = 250;

interface KeyUse {
  /** Requests under way: each holds its place until it ends. */
  inFlight: number;
  /** When recent requests ended, oldest first. */
  endedAt: number[];
  /** Callers waiting for a request under way to end. */
  waiters: (() => void)[];
}


/** The embedded default: the window of this process's requests. */
export class InProcessRequestWindow implements RequestWindow {
  private readonly uses = new Map<string, KeyUse>();
  private readonly sweeper = new StaleKeySweeper();

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async run<T>(key: string, request: () => Promise<T>): Promise<T> {
    for (;;) {
      const taken = this.take(key);
      if (typeof taken !== 'number') return this.runIn(taken, request);
      if (taken > 0) await sleep(taken);
      else await new Promise<void>((resolve) => this.useOf(key).waiters.push(resolve));
    }
  }

  async tryRun<T>(key: string, request: () => Promise<T>): Promise<WindowAttempt<T>> {
    const taken = this.take(key);
    if (typeof taken === 'number') return { ran: false, retryAfterMs: taken > 0 ? taken : IN_FLIGHT_RETRY_MS };
    return { ran: true, value: await this.runIn(taken, request) };
  }

  private async runIn<T>(use: KeyUse, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } finally {
      use.inFlight--;
      use.endedAt.push(this.now());
      use.waiters.shift()?.();
    }
  }

  /** A place in the window for `key`, or how long until one frees (0: when a request under way ends). */
  private take(key: string): KeyUse | number {
    const use = this.useOf(key);
    const now = this.now();
    use.endedAt = use.endedAt.filter((at) => at > now - this.windowMs);
    if (use.inFlight + use.endedAt.length < this.perWindow) {
      use.inFlight++;
      return use;
    }
    const oldest = use.endedAt[0];
    return oldest === undefined ? 0 : oldest + this.windowMs - now;
  }

  private useOf(key: string): KeyUse {
    const since = this.now() - this.windowMs;
    // Keys with nothing under way or recent.
    this.sweeper.beforeAdd(this.uses, (use) => use.inFlight === 0 && use.waiters.length === 0 && use.endedAt.every((at) => at <= since));
    const use = this.uses.get(key) ?? { inFlight: 0, endedAt: [], waiters: [] };
    this.uses.set(key, use);
    return use;
  }
}

// A sorted set per key: members are requests, scores when they ended (or, while under way, the
// latest they may still end). Redis's clock, so the processes' clocks need not agree.
const ACQUIRE = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[4])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + window)
  return -1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)`;
const ENDED = `
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], 'XX', t[1] * 1000 + math.floor(t[2] / 1000), ARGV[1])
return 0`;

/** Longest a request under way is counted as such; a process that died mid-request frees its place after it. */
const MAX_HOLD_MS = 60_000;
/** Longest single wait before asking Redis again (a place held by a request under way may free up early). */
const MAX_POLL_MS = 250;

/** Scaled out: one window shared by every process, in Redis. */
export class RedisRequestWindow implements RequestWindow {
  constructor(
    private readonly redis: Redis,
    /** Key prefix of this window, e.g. `deerflow:window:feishu:chat`. */
    private readonly prefix: string,
    private readonly perWindow: number,
    private readonly windowMs: number,
  ) {}

  async run<T>(key: string, request: () => Promise<T>): Promise<T> {
    const zset = `${this.prefix}:${key}`;
    const member = randomUUID();
    for (;;) {
      const waitMs = await this.take(zset, member);
      if (waitMs < 0) break;
      await sleep(Math.min(waitMs, MAX_POLL_MS));
    }
    return this.runIn(zset, member, request);
  }

  async tryRun<T>(key: string, request: () => Promise<T>): Promise<WindowAttempt<T>> {
    const zset = `${this.prefix}:${key}`;
    const member = randomUUID();
    const waitMs = await this.take(zset, member);
    if (waitMs >= 0) return { ran: false, retryAfterMs: waitMs };
    return { ran: true, value: await this.runIn(zset, member, request) };
  }

  /** -1 when `member` has a place now, else how long until one may free. */
  private async take(zset: string, member: string): Promise<number> {
    // Redis unreachable: the request goes out unpaced (the platform's 429 still holds it back)
    // rather than not at all.
    return Number(await this.redis.eval(ACQUIRE, 1, zset, this.windowMs, this.perWindow, MAX_HOLD_MS, member).catch(() => -1));
  }

  private async runIn<T>(zset: string, member: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } finally {
      await this.redis.eval(ENDED, 1, zset, member).catch(() => undefined);
    }
  }
}
