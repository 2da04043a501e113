import type { InboundIntake, InboundMessage } from '../channel/types.js';

/** How a message reached the worker. */
export interface Delivery {
  /**
   * A worker of a process that died had taken this message (the scaled-out bus hands it to another
   * after its lock ran out). Its dedupe claim is the dead worker's, not a sign of a duplicate.
   */
  redelivered: boolean;
  /**
   * Whether this process still holds the message, asked right before a final goes out: a process
   * whose event loop stalled past the handover may find another has taken it over (and answers
   * it). Absent where a message cannot pass to another process (the in-process bus). Resolves
   * true when the bus cannot tell (answering twice beats never answering).
   */
  isStillHeld?: () => Promise<boolean>;
}

/** Handles one message; `signal` aborts when shutdown's grace period ran out. */
export type InboundHandler = (message: InboundMessage, signal: AbortSignal, delivery: Delivery) => Promise<void>;

export interface BusStats {
  /** Accepted and waiting for a worker. */
  queued: number;
  /** Being handled right now. */
  inFlight: number;
  /** Refused because the queue was full, since start. */
  refused: number;
}

export interface BusStopReport {
  /** In-flight messages that finished within the grace period. */
  drained: number;
  /** In-flight messages aborted when the grace period ran out. */
  cancelled: number;
  /** Accepted messages no worker had started; dropped. */
  discarded: number;
}

/**
 * Inbound messages from every platform to the manager's workers. Admission never waits
 * (reference §2): a full queue refuses at once, before the platform's acknowledgement is sent.
 * Implementations: in-process (embedded default); Redis/BullMQ when scaled out.
 */
export interface InboundBus extends InboundIntake {
  /** Starts the fixed worker pool; each worker handles one message at a time. */
  start(handler: InboundHandler): void;
  /**
   * Stops intake at once (outstanding reservations become invalid), lets in-flight work finish
   * for up to `graceMs`, then aborts it and discards what never started.
   */
  stop(graceMs: number): Promise<BusStopReport>;
  stats(): BusStats;
  /** Resolves when the queue can take messages; rejects with why not (Redis unreachable). */
  ping(): Promise<void>;
}
