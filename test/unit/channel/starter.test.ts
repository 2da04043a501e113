import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { IngressLease } from '../../../src/channel/ingress-lease.js';
import { ChannelStarter } from '../../../src/channel/starter.js';
import type { ChannelAdapter, ChannelStatus } from '../../../src/channel/types.js';
import { ChannelError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';

/** An adapter whose start() answers from a script: an error, or success once the script is empty. */
class ScriptedAdapter {
  readonly capabilities = {} as ChannelAdapter['capabilities'];
  readonly egress = {} as ChannelAdapter['egress'];
  starts = 0;
  stops = 0;
  /** When set, start() waits for it before answering. */
  hold: Promise<void> | undefined;
  private state: ChannelStatus = { running: false, reason: 'not started' };

  constructor(
    readonly name: string,
    private readonly script: Error[],
    readonly exclusiveIngress = false,
  ) {}

  get displayName(): string {
    return this.name;
  }

  async start(): Promise<void> {
    this.starts++;
    await this.hold;
    const error = this.script.shift();
    if (error) {
      this.state = { running: false, reason: error.message };
      throw error;
    }
    this.state = { running: true };
  }

  async stop(): Promise<void> {
    this.stops++;
    this.state = { running: false, reason: 'stopped' };
  }

  status(): ChannelStatus {
    return this.state;
  }
}

const unreachable = () => new ChannelError('telegram', 'CHANNEL_UNAVAILABLE', 'Telegram unreachable: connect ECONNREFUSED');
const refused = () => new ChannelError('telegram', 'CHANNEL_UNAUTHORIZED', 'Telegram rejected the bot token (401 Unauthorized)');

describe('ChannelStarter', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const starter = () => new ChannelStarter({ logger: silentLogger(), firstRetryDelayMs: 1000, maxRetryDelayMs: 4000, random: () => 0.5 });

  it('starts every channel; one that fails does not stop the others', async () => {
    const ok = new ScriptedAdapter('slack', []);
    const bad = new ScriptedAdapter('telegram', [refused()]);
    const channels = starter();
    await channels.startAll([ok, bad] as unknown as ChannelAdapter[]);
    expect(channels.status(ok as unknown as ChannelAdapter)).toEqual({ running: true });
    expect(channels.status(bad as unknown as ChannelAdapter)).toEqual({ running: false, reason: 'Telegram rejected the bot token (401 Unauthorized)' });
  });

  it('tries an unreachable platform again with growing waits until it starts, and says so meanwhile', async () => {
    const adapter = new ScriptedAdapter('telegram', [unreachable(), unreachable(), unreachable(), unreachable()]);
    const channel = adapter as unknown as ChannelAdapter;
    const channels = starter();
    await channels.startAll([channel]);
    expect(channels.status(channel)).toEqual({ running: false, reason: 'Telegram unreachable: connect ECONNREFUSED (retrying)' });
    // Waits of 1 s, 2 s, 4 s, then capped at 4 s (random 0.5 = no jitter).
    for (const [waitMs, starts] of [[999, 1], [1, 2], [2000, 3], [4000, 4], [3999, 4], [1, 5]] as const) {
      await vi.advanceTimersByTimeAsync(waitMs);
      expect(adapter.starts).toBe(starts);
    }
    expect(channels.status(channel)).toEqual({ running: true });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(adapter.starts).toBe(5);
  });

  it('never retries refused credentials', async () => {
    const adapter = new ScriptedAdapter('telegram', [refused()]);
    const channels = starter();
    await channels.startAll([adapter as unknown as ChannelAdapter]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(adapter.starts).toBe(1);
  });

  it('stops retrying when stopped', async () => {
    const adapter = new ScriptedAdapter('telegram', [unreachable()]);
    const channels = starter();
    await channels.startAll([adapter as unknown as ChannelAdapter]);
    await channels.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(adapter.starts).toBe(1);
    expect(channels.status(adapter as unknown as ChannelAdapter).reason).toBe('Telegram unreachable: connect ECONNREFUSED');
  });

  it('lets a retry under way end before stop() resolves, and retries no more after it failed', async () => {
    const adapter = new ScriptedAdapter('telegram', [unreachable(), unreachable()]);
    const channels = starter();
    await channels.startAll([adapter as unknown as ChannelAdapter]);
    let release: () => void = () => undefined;
    adapter.hold = new Promise((resolve) => (release = resolve));
    await vi.advanceTimersByTimeAsync(1000);
    expect(adapter.starts).toBe(2);
    let isStopped = false;
    const stopping = channels.stop().then(() => (isStopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(isStopped).toBe(false);
    release();
    await stopping;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(adapter.starts).toBe(2);
  });

  it('spreads retries with jitter between half and one and a half times the wait', async () => {
    for (const [random, firstRetryAtMs] of [[0, 500], [0.999, 1499]] as const) {
      const adapter = new ScriptedAdapter('telegram', [unreachable()]);
      const channels = new ChannelStarter({ logger: silentLogger(), firstRetryDelayMs: 1000, random: () => random });
      await channels.startAll([adapter as unknown as ChannelAdapter]);
      await vi.advanceTimersByTimeAsync(firstRetryAtMs - 1);
      expect(adapter.starts).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(adapter.starts).toBe(2);
      await channels.stop();
    }
  });
});

/** Leases of several "processes" in one Map, with expiry on the fake clock; `isDown` = Redis unreachable. */
class SharedLeases {
  readonly holders = new Map<string, { holder: string; expiresAt: number }>();
  isDown = false;
  constructor(private readonly ttlMs: number) {}

  for(holder: string): IngressLease {
    const check = () => {
      if (this.isDown) throw new Error('connect ECONNREFUSED');
    };
    const current = (channel: string) => {
      const lease = this.holders.get(channel);
      return lease !== undefined && lease.expiresAt > Date.now() ? lease : undefined;
    };
    return {
      ttlMs: this.ttlMs,
      acquire: async (channel) => {
        check();
        const lease = current(channel);
        if (lease !== undefined && lease.holder !== holder) return false;
        this.holders.set(channel, { holder, expiresAt: Date.now() + this.ttlMs });
        return true;
      },
      renew: async (channel) => {
        check();
        if (current(channel)?.holder !== holder) return false;
        this.holders.set(channel, { holder, expiresAt: Date.now() + this.ttlMs });
        return true;
      },
      release: async (channel) => {
        if (current(channel)?.holder === holder) this.holders.delete(channel);
      },
      close: async () => undefined,
    };
  }
}

describe('ChannelStarter with an ingress lease (several processes)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const TTL = 3000;
  const process = (leases: SharedLeases, holder: string) =>
    new ChannelStarter({ logger: silentLogger(), lease: leases.for(holder), firstRetryDelayMs: 1000, random: () => 0.5 });

  it('runs exclusive ingress in one process; the other stands by and takes over when the holder stops', async () => {
    const leases = new SharedLeases(TTL);
    const [inA, inB] = [new ScriptedAdapter('telegram', [], true), new ScriptedAdapter('telegram', [], true)];
    const [a, b] = [process(leases, 'a'), process(leases, 'b')];
    await a.startAll([inA as unknown as ChannelAdapter]);
    await b.startAll([inB as unknown as ChannelAdapter]);
    expect([inA.starts, inB.starts]).toEqual([1, 0]);
    expect(a.status(inA as unknown as ChannelAdapter)).toEqual({ running: true });
    expect(b.status(inB as unknown as ChannelAdapter)).toEqual({ running: false, standby: true, reason: 'standby: another process runs the telegram connection' });
    // The holder keeps renewing: the standby never gets in.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(inB.starts).toBe(0);
    // The holder shuts down cleanly and gives the lease up: the standby starts at its next check.
    await a.stop();
    await inA.stop();
    await a.releaseLeases();
    await vi.advanceTimersByTimeAsync(1000);
    expect(inB.starts).toBe(1);
    expect(b.status(inB as unknown as ChannelAdapter)).toEqual({ running: true });
    await b.stop();
  });

  it('keeps renewing the lease while a slow start is under way, so no second process starts', async () => {
    const leases = new SharedLeases(TTL);
    const [inA, inB] = [new ScriptedAdapter('telegram', [], true), new ScriptedAdapter('telegram', [], true)];
    let release: () => void = () => undefined;
    inA.hold = new Promise((resolve) => (release = resolve));
    const [a, b] = [process(leases, 'a'), process(leases, 'b')];
    const starting = a.startAll([inA as unknown as ChannelAdapter]);
    await vi.advanceTimersByTimeAsync(0);
    await b.startAll([inB as unknown as ChannelAdapter]);
    await vi.advanceTimersByTimeAsync(3 * TTL);
    expect([inA.starts, inB.starts]).toEqual([1, 0]);
    release();
    await starting;
    expect(a.status(inA as unknown as ChannelAdapter)).toEqual({ running: true });
    await Promise.all([a.stop(), b.stop()]);
  });

  it('takes over from a holder that died once its lease ran out', async () => {
    const leases = new SharedLeases(TTL);
    const [inA, inB] = [new ScriptedAdapter('telegram', [], true), new ScriptedAdapter('telegram', [], true)];
    const [a, b] = [process(leases, 'a'), process(leases, 'b')];
    await a.startAll([inA as unknown as ChannelAdapter]);
    await b.startAll([inB as unknown as ChannelAdapter]);
    await a.stop(); // Dies: no more renewals, no release.
    await vi.advanceTimersByTimeAsync(TTL - 1000);
    expect(inB.starts).toBe(0);
    await vi.advanceTimersByTimeAsync(2000);
    expect(inB.starts).toBe(1);
    await b.stop();
  });

  it('stops ingress when its lease was taken over, and when Redis stays unreachable for half the lease', async () => {
    const leases = new SharedLeases(TTL);
    const adapter = new ScriptedAdapter('telegram', [], true);
    const a = process(leases, 'a');
    await a.startAll([adapter as unknown as ChannelAdapter]);
    leases.holders.set('telegram', { holder: 'someone else', expiresAt: Date.now() + 60_000 });
    await vi.advanceTimersByTimeAsync(1000);
    expect(adapter.stops).toBe(1);
    expect(a.status(adapter as unknown as ChannelAdapter).standby).toBe(true);

    leases.holders.delete('telegram');
    await vi.advanceTimersByTimeAsync(1000);
    expect(adapter.starts).toBe(2);
    leases.isDown = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(adapter.stops).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(adapter.stops).toBe(2);
    await a.stop();
  });

  it('starts channels without exclusive ingress in every process', async () => {
    const leases = new SharedLeases(TTL);
    const [inA, inB] = [new ScriptedAdapter('feishu', []), new ScriptedAdapter('feishu', [])];
    await process(leases, 'a').startAll([inA as unknown as ChannelAdapter]);
    await process(leases, 'b').startAll([inB as unknown as ChannelAdapter]);
    expect([inA.starts, inB.starts]).toEqual([1, 1]);
    expect(leases.holders.size).toBe(0);
  });
});
