import type { z } from 'zod';
import type { Logger } from '../logger.js';

/**
 * The one warning every adapter logs for an event that passed its platform's signature or socket
 * handshake but not its zod schema: which platform, which kind of event, and the paths (and issue
 * codes) zod complained about. Never the values: they may be message text or tokens. The event is
 * then dropped (and acknowledged as the platform needs), never handed on half-checked.
 */
export function logMalformedEvent(logger: Logger, platform: string, kind: string, error: z.ZodError): void {
  const issues = error.issues.slice(0, 10).map((issue) => ({ path: issue.path.map(String).join('.') || '(root)', code: issue.code }));
  logger.warn({ platform, event: kind, issues }, 'malformed event dropped');
}
