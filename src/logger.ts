import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs. Message text and secrets never appear at info level: callers log ids and sizes,
 * and these paths are redacted as a second line of defence.
 */
export function createLogger(options: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'deerflow-channels' },
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

/** A logger that discards everything, for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
