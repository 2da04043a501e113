import pino, { type Logger } from 'pino';
import { redactSecrets } from './redact.js';

export type { Logger };

/**
 * JSON logs. Message text and secrets never appear at info level: callers log ids and sizes,
 * and these paths are redacted as a second line of defence. A logged error's message and stack
 * (its causes' too: a model endpoint's 401 may quote the key) go through `redactSecrets`.
 */
export function createLogger(options: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'deerflow-channels' },
      serializers: { err: serializeError },
      redact: {
        paths: [
          '*.bot_token',
          '*.api_key',
          '*.apiKey',
          '*.token',
          '*.secret',
          '*.password',
          '*.authorization',
          'req.headers.authorization',
          'req.headers["x-api-key"]',
          '*.text',
        ],
        censor: '[redacted]',
      },
    },
    options.destination,
  );
}

/** pino's error serializer, then every text in it (message, stack, an SDK's `error` body) redacted. */
function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  return JSON.parse(redactSecrets(JSON.stringify(pino.stdSerializers.err(error))));
}

/**
 * Where the server's log goes: stdout as JSON, or coloured lines for a person (`log.format`,
 * `auto`: pretty when stdout is a terminal). pino-pretty is loaded only then; it writes
 * synchronously, so the last lines before an exit are not lost.
 */
export async function logDestination(format: 'auto' | 'json' | 'pretty', isTerminal: boolean): Promise<pino.DestinationStream | undefined> {
  if (format === 'json' || (format === 'auto' && !isTerminal)) return undefined;
  const { default: pretty } = await import('pino-pretty');
  return pretty({ colorize: isTerminal, sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
}

/** A logger that discards everything, for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
