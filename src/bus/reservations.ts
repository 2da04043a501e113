import type { InboundMessage, InboundReservation } from '../channel/types.js';
import { AppError } from '../errors.js';

/**
 * The slots both buses hand out before an acknowledgement: how many are taken, and which ones a
 * stop invalidated (a reservation taken before `close()` can no longer commit). The capacity
 * check is the bus's own: what counts as queued differs.
 */
export class Reservations {
  private taken = 0;
  private generation = 0;
  private isOpenNow = true;

  get isOpen(): boolean {
    return this.isOpenNow;
  }

  /** Slots handed out and not yet committed or released. */
  get count(): number {
    return this.taken;
  }

  open(): void {
    this.isOpenNow = true;
  }

  /** Refuses new slots and invalidates the outstanding ones. */
  close(): void {
    this.isOpenNow = false;
    this.generation++;
    this.taken = 0;
  }

  /** @throws AppError `INBOUND_QUEUE_CLOSED` after `close()`. */
  assertOpen(): void {
    if (!this.isOpenNow) throw new AppError('INBOUND_QUEUE_CLOSED', 'inbound intake is closed');
  }

  /** A new slot; its commit hands the message to `accept` (the bus's queue). */
  take(accept: (message: InboundMessage) => Promise<void> | void): InboundReservation {
    this.taken++;
    const generation = this.generation;
    let isSettled = false;
    const settle = (): boolean => {
      if (isSettled) return false;
      isSettled = true;
      if (generation === this.generation) this.taken--;
      return true;
    };
    return {
      commit: async (message) => {
        if (generation !== this.generation || !this.isOpenNow) {
          settle();
          throw new AppError('INBOUND_QUEUE_CLOSED', 'inbound intake closed before the message was committed');
        }
        if (!settle()) throw new AppError('INTERNAL', 'reservation already used');
        await accept(message);
      },
      release: () => void settle(),
    };
  }
}
