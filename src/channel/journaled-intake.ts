import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { type DedupeKey, dedupeKeyOf, type TurnJournal } from './turn-journal.js';
import type { InboundIntake, InboundMessage, InboundReservation } from './types.js';

export interface JournaledIntakeOptions {
  /** Where accepted messages go next: the bus. */
  intake: InboundIntake;
  journal: TurnJournal;
  logger: Logger;
  /** A platform delivered a message that was accepted already. */
  onDuplicate?: (channel: string) => void;
}

/**
 * The intake every adapter commits to. A message is written to the turn journal, with its reply
 * target, before the bus takes it: from then on it is accepted once (the platform's redelivery is
 * refused as a duplicate, in every process) and a crash cannot lose it (issue #15). A resumed turn
 * (`resumes` set) is in the journal already and goes straight on.
 */
export class JournaledIntake implements InboundIntake {
  constructor(private readonly options: JournaledIntakeOptions) {}

  /** @throws AppError as the bus's `reserve` does. */
  async reserve(): Promise<InboundReservation> {
    const reservation = await this.options.intake.reserve();
    return {
      commit: (message) => this.commit(reservation, message),
      release: () => reservation.release(),
    };
  }

  async hasRoom(): Promise<boolean> {
    return (await this.options.intake.hasRoom?.()) ?? true;
  }

  /**
   * @throws AppError `DUPLICATE_DELIVERY` (the reservation is released) when the message was
   * accepted before; else what the bus's `commit` throws, the journal entry withdrawn so a
   * redelivery can try again.
   */
  private async commit(reservation: InboundReservation, message: InboundMessage): Promise<void> {
    const key = message.resumes === undefined ? dedupeKeyOf(message) : undefined;
    let isJournaled: boolean;
    try {
      isJournaled = key !== undefined && (await this.accept(key, message));
    } catch (error) {
      reservation.release();
      throw error;
    }
    try {
      await reservation.commit(message);
    } catch (error) {
      if (isJournaled && key !== undefined) {
        await this.options.journal.release(key).catch((e: unknown) => this.options.logger.warn({ err: describeError(e) }, 'could not withdraw a turn the bus refused'));
      }
      throw error;
    }
  }

  /** True when journaled; false when the journal is down (fail open: answering twice beats never answering). */
  private async accept(key: DedupeKey, message: InboundMessage): Promise<boolean> {
    let isNew: boolean;
    try {
      isNew = await this.options.journal.accept(key, message);
    } catch (error) {
      this.options.logger.warn({ channel: key.channel, err: describeError(error) }, 'turn journal unavailable; accepting without it');
      return false;
    }
    if (isNew) return true;
    this.options.onDuplicate?.(key.channel);
    throw new AppError('DUPLICATE_DELIVERY', `${key.channel} delivered a message that was accepted already`, { status: 200 });
  }
}

/** The platform delivered the message again after it was accepted: nothing more to do for it. */
export function isDuplicateDelivery(error: unknown): boolean {
  return error instanceof AppError && error.code === 'DUPLICATE_DELIVERY';
}
