import type { InboundIntake, InboundMessage, InboundReservation } from '../../src/channel/types.js';
import { AppError } from '../../src/errors.js';
import { startLoadScaledTimer } from './load-scaled-timer.js';

/**
 * An intake for adapter tests: records commits, can be made full (reserve rejects with
 * INBOUND_QUEUE_FULL), can hold reservations behind `gate`, and lets tests wait without sleeping.
 */
export class RecordingIntake implements InboundIntake {
  readonly committed: InboundMessage[] = [];
  reserved = 0;
  refused = 0;
  isFull = false;
  /** When set, reserve() waits for it (to hold an acknowledgement in flight). */
  gate: Promise<void> | undefined;
  private readonly listeners = new Set<() => void>();

  async reserve(): Promise<InboundReservation> {
    this.reserved += 1;
    this.notify();
    await this.gate;
    if (this.isFull) {
      this.refused += 1;
      this.notify();
      throw new AppError('INBOUND_QUEUE_FULL', 'inbound queue is full', { status: 503 });
    }
    return {
      commit: async (message) => {
        this.committed.push(message);
        this.notify();
      },
      release: () => undefined,
    };
  }

  /**
   * Resolves once `predicate` holds, checked after every commit or refusal; rejects after
   * `timeoutMs` stretched by the machine's load (`startLoadScaledTimer`).
   */
  waitUntil(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate()) return;
        timer.cancel();
        this.listeners.delete(check);
        resolve();
      };
      const timer = startLoadScaledTimer(timeoutMs, (waitedMs) => {
        this.listeners.delete(check);
        reject(new Error(`intake condition not met within ${waitedMs} ms`));
      });
      this.listeners.add(check);
      check();
    });
  }

  async waitForCommits(count: number): Promise<InboundMessage[]> {
    await this.waitUntil(() => this.committed.length >= count);
    return this.committed;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
