import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { BusStats } from './bus/types.js';
import type { OutboxCounts, OutboxMetrics } from './channel/outbox.js';
import type { ChannelStatus } from './channel/types.js';

/** What the manager reports about the messages it handles. Labels are channel names only: never text or ids. */
export interface MessageMetrics {
  /** A worker took a message and is handling it. */
  accepted(channel: string): void;
  /** A redelivery was refused at the intake: the turn journal had the message already. */
  duplicate(channel: string): void;
  /** A message's reply was delivered (`ok`) or ended in an error text (`failed`), `seconds` after ingress received it. */
  answered(channel: string, outcome: 'ok' | 'failed', seconds: number): void;
}

/** Where the gauges read their values, at scrape time. */
export interface MetricSources {
  bus: () => BusStats;
  channels: () => [string, ChannelStatus][];
  /** The outbox's pending entries and dead letters, every process's together. */
  outbox: () => Promise<OutboxCounts>;
}

/**
 * The server's Prometheus metrics (`GET /metrics`): messages per channel and outcome, time from
 * receipt to the final reply, the inbound queue, whether each channel runs, and Node's own
 * process metrics. One registry per server, so tests and several servers in a process never mix.
 */
export class ServerMetrics implements MessageMetrics, OutboxMetrics {
  readonly registry = new Registry();
  private readonly messages: Counter<'channel' | 'result'>;
  private readonly replies: Counter<'channel' | 'outcome'>;
  private readonly replySeconds: Histogram<'channel'>;
  private readonly outboxEvents: Counter<'channel' | 'event'>;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'deerflow_' });
    this.messages = new Counter({
      name: 'deerflow_inbound_messages_total',
      help: 'Inbound messages by channel and result: accepted (a worker took it), duplicate (a redelivery the turn journal refused).',
      labelNames: ['channel', 'result'],
      registers,
    });
    this.replies = new Counter({
      name: 'deerflow_replies_total',
      help: 'Replies delivered, by channel and outcome (ok, failed = an error or refusal text).',
      labelNames: ['channel', 'outcome'],
      registers,
    });
    this.replySeconds = new Histogram({
      name: 'deerflow_reply_seconds',
      help: 'From ingress receiving a message to its final reply, in seconds.',
      labelNames: ['channel'],
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers,
    });
    this.outboxEvents = new Counter({
      name: 'deerflow_outbox_events_total',
      help: 'Replies the platform would not take at once, by channel and event: kept (in the outbox for another attempt), delivered (by a later attempt), dead (a dead letter).',
      labelNames: ['channel', 'event'],
      registers,
    });
    new Gauge({
      name: 'deerflow_outbox_entries',
      help: 'Replies in the outbox now, by state: pending (waiting for another attempt) or dead (dead letters for the operator). Every process reports the shared outbox.',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await sources.outbox().catch(() => undefined);
        this.reset();
        if (counts === undefined) return;
        this.set({ state: 'pending' }, counts.pending);
        this.set({ state: 'dead' }, counts.dead);
      },
    });
    new Gauge({
      name: 'deerflow_inbound_in_flight',
      help: 'Messages this process is handling now.',
      registers,
      collect() {
        this.set(sources.bus().inFlight);
      },
    });
    new Gauge({
      name: 'deerflow_inbound_refused',
      help: 'Messages refused because the inbound queue was full, since start (refused before any acknowledgement).',
      registers,
      collect() {
        this.set(sources.bus().refused);
      },
    });
    new Gauge({
      name: 'deerflow_channel_running',
      help: 'Whether a channel runs in this process: 1 running, 0.5 standby (another process holds its connection), 0 not running.',
      labelNames: ['channel'],
      registers,
      collect() {
        this.reset();
        for (const [channel, status] of sources.channels()) this.set({ channel }, status.running ? 1 : status.standby ? 0.5 : 0);
      },
    });
  }

  accepted(channel: string): void {
    this.messages.inc({ channel, result: 'accepted' });
  }

  duplicate(channel: string): void {
    this.messages.inc({ channel, result: 'duplicate' });
  }

  answered(channel: string, outcome: 'ok' | 'failed', seconds: number): void {
    this.replies.inc({ channel, outcome });
    this.replySeconds.observe({ channel }, Math.max(0, seconds));
  }

  outboxEvent(channel: string, event: 'kept' | 'delivered' | 'dead'): void {
    this.outboxEvents.inc({ channel, event });
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
