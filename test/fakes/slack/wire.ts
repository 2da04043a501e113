import type { IncomingMessage } from 'node:http';
import { SlackApiFailure } from './messages.js';

/** Request parsing as Slack's endpoints do it. */

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** An upload URL takes the raw bytes or a multipart form whose first file part holds them (what the SDK sends). */
export async function uploadedBytes(body: Buffer, contentType: string | undefined): Promise<Uint8Array> {
  if (!contentType?.startsWith('multipart/form-data')) return new Uint8Array(body);
  const form = await new Response(new Uint8Array(body), { headers: { 'content-type': contentType } }).formData();
  for (const value of form.values()) {
    if (typeof value !== 'string') return new Uint8Array(await value.arrayBuffer());
  }
  throw new SlackApiFailure('invalid_upload', 400);
}

export function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}

/** Web API bodies: urlencoded (nested values as JSON strings, as the SDK sends them) or JSON. */
export function parseParams(body: Buffer, contentType: string | undefined): Record<string, unknown> {
  const text = body.toString('utf8');
  if (text === '') return {};
  if (contentType?.includes('application/json')) return JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries(new URLSearchParams(text));
}

