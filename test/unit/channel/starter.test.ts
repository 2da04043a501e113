import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
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
