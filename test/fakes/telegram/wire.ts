import type { IncomingMessage } from 'node:http';

/**
 * Request parsing as the Bot API does it: parameters from the query string and from a JSON,
 * urlencoded or multipart body (https://core.telegram.org/bots/api#making-requests).
 */

const NUMERIC_KEYS = new Set(['chat_id', 'message_id', 'offset', 'limit', 'timeout', 'reply_to_message_id']);
const BOOLEAN_KEYS = new Set(['drop_pending_updates', 'allow_sending_without_reply', 'disable_notification']);
const JSON_KEYS = new Set(['reply_parameters', 'reply_markup', 'allowed_updates', 'commands', 'entities', 'scope']);

/** Form values arrive as strings; give the keys the fake reads their JSON types back. */
function coerce(key: string, value: string): unknown {
  if (NUMERIC_KEYS.has(key) && /^-?\d+$/.test(value)) return Number(value);
  if (BOOLEAN_KEYS.has(key)) return value === 'true';
  if (JSON_KEYS.has(key)) {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

/** All parameters of a request; uploaded files become `{ filename, size }`. */
export async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const params: Record<string, unknown> = {};
  for (const [key, value] of url.searchParams) params[key] = coerce(key, value);
  const type = req.headers['content-type'] ?? '';
  if (body.length === 0) return params;
  if (type.startsWith('application/json')) return { ...params, ...(JSON.parse(body.toString('utf8')) as object) };
  if (type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data')) {
    const form = await new Response(body, { headers: { 'content-type': type } }).formData();
    for (const [key, value] of form) {
      params[key] = typeof value === 'string' ? coerce(key, value) : { filename: value.name, size: value.size };
    }
  }
  return params;
}

