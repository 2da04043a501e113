import type { Registry } from 'prom-client';
import { z } from 'zod';

/** The `metrics:` block of config.yaml. */
export const metricsConfigSchema = z
  .strictObject({
    history_interval_seconds: z
      .number({ error: 'must be a number of seconds' })
      .int('must be a whole number of seconds')
      .min(1, 'must be at least 1 second')
      .max(3600, 'must be at most 3600 seconds (an hour)')
      .default(60)
      .describe(
        'How often the console charts take a sample of the metrics (GET /api/metrics/history). The last 6 hours are kept in memory and lost on restart.',
      ),
  })
  .prefault({});

export type MetricsConfig = z.infer<typeof metricsConfigSchema>;

/** How far back the history reaches. */
export const HISTORY_WINDOW_MS = 6 * 60 * 60 * 1000;
/** At most this many samples are kept, whatever the interval: 6 hours at 1 s (a few MB at worst). */
export const MAX_HISTORY_POINTS = 21_600;

/** One interval between two samples: what happened in it. */
export interface HistoryPoint {
  /** When the sample was taken (the interval's end), ms since the epoch. */
  at: number;
  /** Length of the interval in seconds; the first sample's runs from the process start. */
  seconds: number;
  /** Replies delivered (`answered`) and ending in an error or refusal text (`failed`), per channel; channels with neither are left out. */
  channels: Record<string, { answered: number; failed: number }>;
  answered: number;
  failed: number;
  /** Time from receipt to final reply of the replies in the interval, every channel together; null without replies. */
  latency: { p50Seconds: number | null; p95Seconds: number | null };
  /**
   * Errors in the interval: `deliveryRetries` = replies a platform would not take at once (kept in
   * the outbox), `deadLetters` = replies given up on, `refused` = messages refused because the
   * inbound queue was full.
   */
  errors: { deliveryRetries: number; deadLetters: number; refused: number; total: number };
}

/** A cumulative histogram bucket: `count` observations at or below `le` seconds. */
export interface Bucket {
  le: number;
  count: number;
}

const REPLIES = 'deerflow_replies_total';
const REPLY_SECONDS = 'deerflow_reply_seconds';
const OUTBOX_EVENTS = 'deerflow_outbox_events_total';
const REFUSED = 'deerflow_inbound_refused';

/** One series as read from the registry: its metric name (`_bucket` for a histogram's buckets), labels and value. */
interface Series {
  name: string;
  labels: Record<string, string | number>;
  value: number;
}

/** Cumulative values by series key, as read from the registry at one moment. */
type Snapshot = Map<string, Series>;

/**
 * The `q`-quantile (0..1) of cumulative buckets, interpolated linearly inside its bucket as
 * Prometheus' `histogram_quantile` does; one that falls in the `+Inf` bucket is the highest finite
 * bound. Null when there are no observations.
 */
export function quantileOf(buckets: readonly Bucket[], q: number): number | null {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bucket of sorted) {
    if (bucket.count >= rank && bucket.count > lowerCount) {
      if (bucket.le === Number.POSITIVE_INFINITY) return lowerBound;
      return lowerBound + ((bucket.le - lowerBound) * (rank - lowerCount)) / (bucket.count - lowerCount);
    }
    lowerBound = bucket.le === Number.POSITIVE_INFINITY ? lowerBound : bucket.le;
    lowerCount = bucket.count;
  }
  return lowerBound;
}

/** `current - previous` per series; a series new since `previous` counts from 0, one that went back (a reset) counts from 0 too. */
export function deltasOf(previous: Snapshot, current: Snapshot): Series[] {
  return [...current].map(([key, series]) => {
    const before = previous.get(key)?.value ?? 0;
    return { ...series, value: series.value >= before ? series.value - before : series.value };
  });
}

/** A fixed-size ring of the newest points: pushing past `capacity` drops the oldest. */
class Ring<T> {
  private readonly items: (T | undefined)[];
  private next = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    this.items = new Array(capacity);
  }

  push(item: T): void {
    this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.size + 1, this.capacity);
  }

  /** Oldest first. */
  toArray(): T[] {
    const start = (this.next - this.size + this.capacity) % this.capacity;
    return Array.from({ length: this.size }, (_, i) => this.items[(start + i) % this.capacity] as T);
  }
}

export interface MetricsHistoryOptions {
  registry: Registry;
  /** Time between samples, in ms. */
  intervalMs: number;
  now?: () => number;
  /** When the counters started (the first sample's interval begins here); default: construction time. */
  startedAt?: number;
  /** Told when a scheduled sample fails (a metric's collect threw); the next one tries again. */
  onError?: (error: unknown) => void;
}

/**
 * The last 6 hours of the server's own metrics, sampled every `intervalMs` into a ring buffer of
 * at most `min(6 h / interval, MAX_HISTORY_POINTS)` points (360 at the default 60 s), for the
 * console's charts. Each point holds the deltas of the counters since the previous sample and the
 * reply-time quantiles of the histogram's bucket deltas. In memory only: a restart starts empty,
 * and each process of a scaled-out deployment has its own.
 */
export class MetricsHistory {
  private readonly ring: Ring<HistoryPoint>;
  private readonly now: () => number;
  private previous: Snapshot = new Map();
  private previousAt: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: MetricsHistoryOptions) {
    this.now = options.now ?? Date.now;
    this.previousAt = options.startedAt ?? this.now();
    this.ring = new Ring(Math.min(MAX_HISTORY_POINTS, Math.ceil(HISTORY_WINDOW_MS / options.intervalMs)));
  }

  /** How many points the history keeps at most. */
  get capacity(): number {
    return this.ring.capacity;
  }

  /** Takes a sample now, then one every interval until `stop`. The timer keeps no process alive. */
  start(): void {
    if (this.timer !== undefined) return;
    const take = () => void this.sample().catch((error: unknown) => this.options.onError?.(error));
    take();
    this.timer = setInterval(take, this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Reads the registry, records the interval since the previous sample, and returns it. */
  async sample(): Promise<HistoryPoint> {
    const current = await this.read();
    const at = this.now();
    const point = pointOf(deltasOf(this.previous, current), at, Math.max(0, (at - this.previousAt) / 1000));
    this.previous = current;
    this.previousAt = at;
    this.ring.push(point);
    return point;
  }

  /** The points taken in the last `windowMs` (at most 6 hours), oldest first. */
  since(windowMs: number): HistoryPoint[] {
    const from = this.now() - Math.min(windowMs, HISTORY_WINDOW_MS);
    return this.ring.toArray().filter((point) => point.at >= from);
  }

  private async read(): Promise<Snapshot> {
    const snapshot: Snapshot = new Map();
    const { registry } = this.options;
    for (const name of [REPLIES, REPLY_SECONDS, OUTBOX_EVENTS, REFUSED]) {
      const metric = registry.getSingleMetric(name);
      if (metric === undefined) continue;
      const { values } = await metric.get();
      for (const { labels, value, ...rest } of values as { labels: Record<string, string | number>; value: number; metricName?: string }[]) {
        const series = rest.metricName ?? name;
        // The histogram's _sum and _count are not needed: the buckets hold the count.
        if (name === REPLY_SECONDS && series !== `${REPLY_SECONDS}_bucket`) continue;
        snapshot.set(seriesKey(series, labels), { name: series, labels, value });
      }
    }
    return snapshot;
  }
}

/** `name{a="x",b="y"}` with labels in name order, so two reads of one series give one key. */
function seriesKey(name: string, labels: Record<string, string | number>): string {
  const parts = Object.keys(labels)
    .sort()
    .map((label) => `${label}=${JSON.stringify(String(labels[label]))}`);
  return `${name}{${parts.join(',')}}`;
}

function pointOf(deltas: readonly Series[], at: number, seconds: number): HistoryPoint {
  const channels: HistoryPoint['channels'] = {};
  const buckets = new Map<number, number>();
  const errors = { deliveryRetries: 0, deadLetters: 0, refused: 0, total: 0 };
  for (const { name, labels, value: delta } of deltas) {
    if (name === REPLIES && delta > 0 && labels.channel !== undefined) {
      const entry = channels[labels.channel] ?? { answered: 0, failed: 0 };
      channels[labels.channel] = entry;
      if (labels.outcome === 'ok') entry.answered += delta;
      else if (labels.outcome === 'failed') entry.failed += delta;
    } else if (name === `${REPLY_SECONDS}_bucket`) {
      const le = labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(labels.le);
      buckets.set(le, (buckets.get(le) ?? 0) + delta);
    } else if (name === OUTBOX_EVENTS) {
      if (labels.event === 'kept') errors.deliveryRetries += delta;
      else if (labels.event === 'dead') errors.deadLetters += delta;
    } else if (name === REFUSED) {
      errors.refused += delta;
    }
  }
  errors.total = errors.deliveryRetries + errors.deadLetters + errors.refused;
  const cumulative = [...buckets].map(([le, count]) => ({ le, count }));
  const totals = Object.values(channels);
  return {
    at,
    seconds,
    channels,
    answered: totals.reduce((sum, entry) => sum + entry.answered, 0),
    failed: totals.reduce((sum, entry) => sum + entry.failed, 0),
    latency: { p50Seconds: quantileOf(cumulative, 0.5), p95Seconds: quantileOf(cumulative, 0.95) },
    errors,
  };
}
