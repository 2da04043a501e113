import type { InboundMessage, InboundReservation } from '../channel/types.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { settledWithin } from '../time.js';
import { Reservations } from './reservations.js';
import type { BusStats, BusStopReport, InboundBus, InboundHandler } from './types.js';

export interface InProcessBusOptions {
  maxQueued: number;
  concurrency: number;
  logger: Logger;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
}

const REFUSAL_LOG_INTERVAL_MS = 1000;
/** In one process a message is handed over once: a crash loses the queue with it. */
const FIRST_DELIVERY = { redelivered: false } as const;

/** The embedded default: a bounded FIFO in memory and a fixed pool of async workers. */
export class InProcessBus implements InboundBus {
  private readonly queue: InboundMessage[] = [];
  private readonly reservations = new Reservations();
  private refused = 0;
  private lastRefusalLogAt = Number.NEGATIVE_INFINITY;
  private readonly idleWorkers: ((message: InboundMessage | undefined) => void)[] = [];
  private readonly inFlight = new Map<Promise<void>, AbortController>();
  private workers: Promise<void>[] = [];
  private readonly now: () => number;

  constructor(private readonly options: InProcessBusOptions) {
    this.now = options.now ?? Date.now;
  }

  async reserve(): Promise<InboundReservation> {
    this.reservations.assertOpen();
    if (this.isFull()) {
      this.refused++;
      this.logRefusal();
      throw new AppError('INBOUND_QUEUE_FULL', 'inbound queue is full');
    }
    return this.reservations.take((message) => this.enqueue(message));
  }

  async hasRoom(): Promise<boolean> {
    return this.reservations.isOpen && !this.isFull();
  }

  /** Queued messages and reservations together fill the intake. */
  private isFull(): boolean {
    return this.queue.length + this.reservations.count >= this.options.maxQueued;
  }

  start(handler: InboundHandler): void {
    if (this.workers.length > 0) throw new AppError('INTERNAL', 'bus already started');
    this.reservations.open();
    this.workers = Array.from({ length: this.options.concurrency }, () => this.work(handler));
  }

  async stop(graceMs: number): Promise<BusStopReport> {
    this.reservations.close();
    const discarded = this.queue.length;
    this.queue.length = 0;
    for (const wake of this.idleWorkers.splice(0)) wake(undefined);

    const pending = [...this.inFlight.keys()];
    let cancelled = 0;
    if (!(await settledWithin(Promise.allSettled(pending), graceMs))) {
      cancelled = this.inFlight.size;
      for (const controller of this.inFlight.values()) controller.abort();
    }
    await Promise.allSettled(this.workers);
    this.workers = [];
    if (discarded > 0 || cancelled > 0) this.options.logger.warn({ discarded, cancelled }, 'inbound bus stopped with unfinished work');
    return { drained: pending.length - cancelled, cancelled, discarded };
  }

  async ping(): Promise<void> {}

  stats(): BusStats {
    return { queued: this.queue.length, inFlight: this.inFlight.size, refused: this.refused };
  }

  private enqueue(message: InboundMessage): void {
    const idle = this.idleWorkers.shift();
    if (idle) idle(message);
    else this.queue.push(message);
  }

  private next(): Promise<InboundMessage | undefined> {
    const message = this.queue.shift();
    if (message) return Promise.resolve(message);
    if (!this.reservations.isOpen) return Promise.resolve(undefined);
    return new Promise((resolve) => this.idleWorkers.push(resolve));
  }

  private async work(handler: InboundHandler): Promise<void> {
    for (;;) {
      const message = await this.next();
      if (!message) return;
      const controller = new AbortController();
      const handled = handler(message, controller.signal, FIRST_DELIVERY).catch((error: unknown) => {
        // The manager handles its own errors; reaching here is a bug, never a reason to stop a worker.
        this.options.logger.error({ channel: message.channel, err: describeError(error) }, 'inbound handler threw');
      });
      this.inFlight.set(handled, controller);
      await handled;
      this.inFlight.delete(handled);
    }
  }

  private logRefusal(): void {
    const now = this.now();
    if (now - this.lastRefusalLogAt < REFUSAL_LOG_INTERVAL_MS) return;
    this.lastRefusalLogAt = now;
    this.options.logger.warn({ refused: this.refused, maxQueued: this.options.maxQueued }, 'inbound capacity exhausted; refusing messages');
  }
}
