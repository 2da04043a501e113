import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../../src/logger.js';
import { Waiters } from '../../fakes/waiters.js';

/**
 * What the malformed-event suites share: a real logger whose JSON lines are kept, so a test can
 * wait for a warning and assert that no error-level line (a TypeError after the ack) was written.
 */
export class CapturedLogs {
  readonly lines: Record<string, unknown>[] = [];
  private readonly waiters = new Waiters('CapturedLogs');
  readonly logger: Logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write: (chunk, _encoding, callback) => {
        this.lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        this.waiters.notify();
        callback();
      },
    }),
  });

  /** Lines at pino's `warn` (40). */
  warnings(): Record<string, unknown>[] {
    return this.lines.filter((line) => line.level === 40);
  }

  /** Lines at `error` (50) or above. */
  errors(): Record<string, unknown>[] {
    return this.lines.filter((line) => typeof line.level === 'number' && line.level >= 50);
  }

  /** Resolves once `count` warnings whose message contains `text` were logged. */
  waitForWarnings(text: string, count: number): Promise<true> {
    return this.waiters.waitFor(() => this.warnings().filter((line) => String(line.msg).includes(text)).length >= count || false);
  }
}

/** The warning every adapter logs for a signed event whose shape is wrong (channels/*: `logMalformedEvent`). */
export const MALFORMED_EVENT_WARNING = 'malformed event dropped';
