import type { IncomingMessage } from 'node:http';

/** How the fake reads Discord REST requests: route names, JSON and multipart bodies. */

/** What the tests name a REST call by. */
export type RouteName = 'gateway' | 'me' | 'send' | 'edit' | 'get-message' | 'reaction' | 'typing' | 'thread' | 'other';

export interface ParsedBody {
  json?: unknown;
  files: { filename: string; contentType: string; bytes: Uint8Array }[];
}

export function routeOf(method: string, path: string): { route: RouteName; channelId?: string } {
  if (path === '/gateway/bot') return { route: 'gateway' };
  if (path === '/users/@me') return { route: 'me' };
  const match = /^\/channels\/(\d+)(?:\/([a-z]+)(?:\/(\d+)(?:\/([a-z]+))?)?)?/.exec(path);
  if (!match) return { route: 'other' };
  const [, channelId, sub, messageId, tail] = match;
  const route: RouteName =
    sub === 'typing'
      ? 'typing'
      : sub !== 'messages'
        ? 'other'
        : tail === 'reactions'
          ? 'reaction'
          : tail === 'threads'
            ? 'thread'
            : messageId === undefined
              ? method === 'POST'
                ? 'send'
                : 'other'
              : method === 'PATCH'
                ? 'edit'
                : 'get-message';
  return { route, ...(channelId ? { channelId } : {}) };
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** JSON, or multipart with `payload_json` and `files[n]` parts (how discord.js uploads). */
export async function parseBody(req: IncomingMessage, body: Buffer): Promise<ParsedBody> {
  const type = req.headers['content-type'] ?? '';
  if (body.byteLength === 0) return { files: [] };
  if (type.startsWith('application/json')) return { json: JSON.parse(body.toString('utf8')), files: [] };
  if (!type.startsWith('multipart/form-data')) return { files: [] };
  const form = await new Request('http://fake/', { method: 'POST', headers: { 'content-type': type }, body }).formData();
  const files: ParsedBody['files'] = [];
  let json: unknown;
  for (const [key, value] of form.entries()) {
    if (key === 'payload_json' && typeof value === 'string') json = JSON.parse(value);
    else if (typeof value !== 'string') {
      files.push({ filename: value.name, contentType: value.type || 'application/octet-stream', bytes: new Uint8Array(await value.arrayBuffer()) });
    }
  }
  return { json, files };
}
