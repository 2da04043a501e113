import { sleep } from '../../src/channel/rate-gate.js';

/** Keys kept before idle ones are forgotten. */
const MAX_IDLE_KEYS = 1024;

interface KeyUse {
  /** Requests under way: each holds its place until it ends. */
  inFlight: number;
  /** When recent requests ended, oldest first. */
  endedAt: number[];
  /** Callers waiting for a request under way to end. */
  waiters: (() => void)[];
}

/**
 * At most `perWindow` requests per key in any `windowMs`, as the platform counts them, across
 * every caller in this process. A request holds its place from its start until `windowMs` after it
 * ended: it reached the platform somewhere in between, so however long requests take, no
 * `windowMs` at the platform sees more than `perWindow` of them. (Counting from the start would
 * let a slow request and the next window's first ones arrive together.) Feishu answers an excess
 * with 429s that block for a second or more, so waiting here is faster than finding out.
 */
export class RequestPacer {
  private readonly uses = new Map<string, KeyUse>();

  constructor(
    private readonly perWindow: number,
    private readonly windowMs: number,
    private readonly now: () => number,
  ) {}

  /** Runs `request` once it fits the window for `key`; resolves or rejects as it does. */
  async run<T>(key: string, request: () => Promise<T>): Promise<T> {
    const use = await this.acquire(key);
    try {
      return await request();
    } finally {
      use.inFlight--;
      use.endedAt.push(this.now());
      use.waiters.shift()?.();
    }
  }

  private async acquire(key: string): Promise<KeyUse> {
    if (this.uses.size > MAX_IDLE_KEYS) this.prune();
    for (;;) {
      const use = this.uses.get(key) ?? { inFlight: 0, endedAt: [], waiters: [] };
      this.uses.set(key, use);
      const now = this.now();
      use.endedAt = use.endedAt.filter((at) => at > now - this.windowMs);
      if (use.inFlight + use.endedAt.length < this.perWindow) {
        use.inFlight++;
        return use;
      }
      const oldest = use.endedAt[0];
      if (oldest !== undefined) await sleep(oldest + this.windowMs - now);
      else await new Promise<void>((resolve) => use.waiters.push(resolve));
    }
  }

  /** Forgets keys with nothing under way or recent (one per chat would pile up otherwise). */
  private prune(): void {
    const since = this.now() - this.windowMs;
    for (const [key, use] of this.uses) {
      if (use.inFlight === 0 && use.waiters.length === 0 && use.endedAt.every((at) => at <= since)) this.uses.delete(key);
    }
  }
}

/**
 * The app's budget per open API method (Feishu: "1000 次/分钟、50 次/秒" per API, per app and
 * tenant, for message sends, replies, patches and each CardKit endpoint; hitting either one
 * throttles). In-process: several server processes share one app's budget without knowing it.
 */
export class AppBudget {
  private readonly pacers: RequestPacer[];

  constructor(limits: readonly { perWindow: number; windowMs: number }[], now: () => number) {
    this.pacers = limits.map((limit) => new RequestPacer(limit.perWindow, limit.windowMs, now));
  }

  /** Runs one `method` call once it fits every window. */
  run<T>(method: string, request: () => Promise<T>): Promise<T> {
    return this.pacers.reduceRight<() => Promise<T>>((inner, pacer) => () => pacer.run(method, inner), request)();
  }
}
