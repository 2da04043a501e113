import { createHash } from 'node:crypto';

/**
 * A user id safe for folder names and memory buckets (reference §4.5): unsafe characters become
 * `-`, and a digest of the raw id is appended whenever anything changed, so two raw ids never
 * collapse into one.
 */
export function safeUserId(raw: string): string {
  const safe = raw.replace(/[^A-Za-z0-9_-]/g, '-');
  if (safe === raw && safe !== '') return safe;
  return `${safe}-${createHash('sha256').update(raw).digest('hex').slice(0, 16)}`;
}
