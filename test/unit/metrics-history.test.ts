import { describe, expect, it } from 'vitest';
import { ServerMetrics } from '../../src/metrics.js';
import { MAX_HISTORY_POINTS, MetricsHistory, quantileOf } from '../../src/metrics-history.js';

/** The server's own registry, with a bus whose refused count the test sets. */
function serverMetrics() {
  const bus = { queued: 0, inFlight: 0, refused: 0 };
  const metrics = new ServerMetrics({ bus: () => bus, channels: () => [], outbox: async () => ({ pending: 0, dead: 0 }) });
  return { metrics, bus };
}

function clock(start = Date.UTC(2026, 11, 6, 12, 0, 0)) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('quantileOf', () => {
  it.each([
    ['no observations', [{ le: 1, count: 0 }, { le: Number.POSITIVE_INFINITY, count: 0 }], 0.5, null],
    ['interpolates inside the bucket', [{ le: 1, count: 0 }, { le: 2, count: 4 }, { le: Number.POSITIVE_INFINITY, count: 4 }], 0.5, 1.5],
    ['the first bucket starts at 0', [{ le: 0.1, count: 10 }, { le: Number.POSITIVE_INFINITY, count: 10 }], 0.5, 0.05],
    ['the +Inf bucket gives the highest finite bound', [{ le: 600, count: 1 }, { le: Number.POSITIVE_INFINITY, count: 10 }], 0.95, 600],
    ['skips empty buckets below', [{ le: 1, count: 0 }, { le: 5, count: 0 }, { le: 10, count: 2 }, { le: Number.POSITIVE_INFINITY, count: 2 }], 0.95, 9.75],
  ])('%s', (_name, buckets, q, expected) => {
    const value = quantileOf(buckets, q);
    if (expected === null) expect(value).toBeNull();
    else expect(value).toBeCloseTo(expected, 6);
  });
});

describe('MetricsHistory', () => {
  it('records per interval the replies per channel and outcome, the reply-time quantiles and the errors, as deltas', async () => {
    const { metrics, bus } = serverMetrics();
    const time = clock();
    const history = new MetricsHistory({ registry: metrics.registry, intervalMs: 60_000, now: time.now });

    // Before the first sample: counted from the start.
    metrics.answered('telegram', 'ok', 0.3);
    metrics.answered('telegram', 'ok', 0.4);
    metrics.answered('slack', 'failed', 7);
    time.advance(60_000);
    const first = await history.sample();
    expect(first.seconds).toBe(60);
    expect(first.channels).toEqual({ telegram: { answered: 2, failed: 0 }, slack: { answered: 0, failed: 1 } });
    expect([first.answered, first.failed]).toEqual([2, 1]);
    // Three replies: 0.3 and 0.4 in (0.25, 0.5], 7 in (5, 10]. Median rank 1.5 → 0.25 + 0.25 × 1.5/2.
    expect(first.latency.p50Seconds).toBeCloseTo(0.4375, 6);
    // Rank 2.85 lies in (5, 10]: 5 + 5 × 0.85.
    expect(first.latency.p95Seconds).toBeCloseTo(9.25, 6);
    expect(first.errors).toEqual({ deliveryRetries: 0, deadLetters: 0, refused: 0, total: 0 });

    // The next interval holds only what happened in it.
    metrics.answered('telegram', 'ok', 1.5);
    metrics.outboxEvent('telegram', 'kept');
    metrics.outboxEvent('telegram', 'kept');
    metrics.outboxEvent('telegram', 'dead');
    metrics.outboxEvent('telegram', 'delivered');
    bus.refused = 3;
    time.advance(60_000);
    const second = await history.sample();
    expect(second.channels).toEqual({ telegram: { answered: 1, failed: 0 } });
    expect(second.latency.p50Seconds).toBeCloseTo(1.75, 6);
    expect(second.errors).toEqual({ deliveryRetries: 2, deadLetters: 1, refused: 3, total: 6 });

    // A quiet interval: nothing, and no quantile made up.
    time.advance(60_000);
    const quiet = await history.sample();
    expect(quiet.channels).toEqual({});
    expect([quiet.answered, quiet.failed, quiet.errors.total]).toEqual([0, 0, 0]);
    expect(quiet.latency).toEqual({ p50Seconds: null, p95Seconds: null });

    expect(history.since(6 * 3600_000).map((point) => point.answered)).toEqual([2, 1, 0]);
    // The last 90 s: the last two samples only.
    expect(history.since(90_000).map((point) => point.at)).toEqual([second.at, quiet.at]);
  });

  it('keeps 6 hours of points and no more: 360 at 60 s, the oldest dropped first', async () => {
    const { metrics } = serverMetrics();
    const time = clock();
    const history = new MetricsHistory({ registry: metrics.registry, intervalMs: 60_000, now: time.now });
    expect(history.capacity).toBe(360);
    for (let i = 0; i < 400; i++) {
      metrics.answered('web', 'ok', 1);
      time.advance(60_000);
      await history.sample();
    }
    const points = history.since(24 * 3600_000);
    expect(points).toHaveLength(360);
    expect(points.every((point) => point.answered === 1)).toBe(true);
    expect(points[0]?.at).toBe(time.now() - 359 * 60_000);
    expect(new MetricsHistory({ registry: metrics.registry, intervalMs: 1 }).capacity).toBe(MAX_HISTORY_POINTS);
  });
});
