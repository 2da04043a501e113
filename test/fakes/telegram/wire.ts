import type { IncomingMessage } from 'node:http';

/**
 * Request parsing as the Bot API does it: parameters from the query string and from a JSON,
 * urlencoded or multipart body (https://core.telegram.org/bots/api#making-requests).
 */

const NUMERIC_KEYS = new Set(['chat_id', 'message_id', 'offset', 'limit', 'timeout', 'reply_to_message_id']);
const BOOLEAN_KEYS = new Set(['drop_pending_updates', 'allow_sending_without_reply', 'disable_notification']);
const JSON_KEYS = new Set(['reply_parameters', 'reply_markup', 'allowed_updates', 'commands', 'entities', 'caption_entities', 'scope']);

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

/** A file part of a multipart body. */
export interface UploadedPart {
  filename: string;
  size: number;
  bytes: Buffer;
}

interface MultipartPart {
  name: string;
  filename?: string;
  data: Buffer;
}

/** A `content-disposition` parameter, quoted (`name="a b"`) or bare; RFC 5987 `filename*` too. */
function dispositionParam(header: string, key: string): string | undefined {
  const extended = new RegExp(`;\\s*${key}\\*=(?:UTF-8|utf-8)''([^;]*)`).exec(header);
  if (extended?.[1] !== undefined) return decodeURIComponent(extended[1]);
  const quoted = new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"`).exec(header);
  if (quoted?.[1] !== undefined) return quoted[1].replace(/\\(.)/g, '$1').replace(/%22/g, '"');
  // grammY writes `filename=<name>` unquoted and last, so a bare filename runs to the line's end.
  const bare = new RegExp(`;\\s*${key}=(${key === 'filename' ? '.*' : '[^;]*'})`).exec(header);
  return bare?.[1]?.trim();
}

/**
 * Splits a multipart/form-data body. Written by hand because Node's `Response.formData()`
 * rejects the unquoted `filename=` grammY sends, which Telegram accepts.
 */
function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const afterDelimiter = start + delimiter.length;
    if (body.subarray(afterDelimiter, afterDelimiter + 2).toString('latin1') === '--') break;
    const partStart = body.indexOf('\r\n', afterDelimiter) + 2;
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), partStart);
    if (partStart < 2 || next === -1) break;
    const part = body.subarray(partStart, next);
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd !== -1) {
      const headers = part.subarray(0, headerEnd).toString('utf8').split('\r\n');
      const disposition = headers.find((line) => /^content-disposition\s*:/i.test(line)) ?? '';
      const name = dispositionParam(disposition, 'name');
      const filename = dispositionParam(disposition, 'filename');
      const data = part.subarray(headerEnd + 4);
      if (name !== undefined) parts.push({ name, data, ...(filename === undefined ? {} : { filename }) });
    }
    start = next + 2;
  }
  return parts;
}

/** All parameters of a request; uploaded files become {@link UploadedPart}s under their part names. */
export async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const params: Record<string, unknown> = {};
  for (const [key, value] of url.searchParams) params[key] = coerce(key, value);
  const type = req.headers['content-type'] ?? '';
  if (body.length === 0) return params;
  if (type.startsWith('application/json')) return { ...params, ...(JSON.parse(body.toString('utf8')) as object) };
  if (type.startsWith('application/x-www-form-urlencoded')) {
    for (const [key, value] of new URLSearchParams(body.toString('utf8'))) params[key] = coerce(key, value);
  }
  const boundary = /^multipart\/form-data;.*boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (boundary !== undefined) {
    for (const part of parseMultipart(body, boundary)) {
      params[part.name] =
        part.filename === undefined
          ? coerce(part.name, part.data.toString('utf8'))
          : ({ filename: part.filename, size: part.data.byteLength, bytes: Buffer.from(part.data) } satisfies UploadedPart);
    }
  }
  return params;
}
