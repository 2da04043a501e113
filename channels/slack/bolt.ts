import { LogLevel, type Receiver, type Logger as BoltLogger } from '@slack/bolt';
import type { Logger } from '../../src/logger.js';

/** Bolt plumbing the ingress needs: a receiver for HTTP mode, Bolt's logger onto ours, a timeout. */

/** HTTP mode: events come from the webhook route through `dispatch`, not from a Bolt receiver. */
export function noopReceiver(): Receiver {
  return { init: () => undefined, start: async () => undefined, stop: async () => undefined };
}

/** Bolt's logger onto ours: its info is our debug, its debug is dropped (it prints payloads). */
export function boltLogger(logger: Logger): BoltLogger {
  const line = (parts: unknown[]): string => parts.map((part) => (part instanceof Error ? `${part.name}: ${part.message}` : String(part))).join(' ');
  let level = LogLevel.INFO;
  return {
    debug: () => undefined,
    info: (...parts) => logger.debug({ bolt: line(parts) }, 'Slack SDK'),
    warn: (...parts) => logger.warn({ bolt: line(parts) }, 'Slack SDK'),
    error: (...parts) => logger.error({ bolt: line(parts) }, 'Slack SDK'),
    setLevel: (next) => {
      level = next;
    },
    getLevel: () => level,
    setName: () => undefined,
  };
}
