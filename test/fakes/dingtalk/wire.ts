import type { IncomingMessage } from 'node:http';

/** FakeDingTalk's public shapes and request parsing. */

export interface RecordedCall {
  method: string;
  path: string;
  body: Record<string, unknown>;
  at: number;
  status: number;
  /** The response's `code` for errors. */
  code?: string;
  /** `x-acs-dingtalk-access-token`, when sent. */
  token?: string;
  /** The chat (the adapter's chat id) the request writes into, when it writes into one. */
  chatId?: string;
}

export type Fault =
  | { kind: 'rate-limit'; retryAfterSeconds: number }
  /** A DingTalk business error: HTTP `status` (default 400) with `{code, message}`. */
  | { kind: 'business'; code: string; status?: number }
  | { kind: 'http'; status: number }
  /** Never answered: the call is recorded and its connection held until the fake stops. */
  | { kind: 'hang' };

export interface FakeDingTalkOptions {
  /** Callbacks not acked within this are delivered again; default 60000. */
  redeliverAfterMs?: number;
  /** `expireIn` of issued tokens, in seconds; default 7200. */
  tokenExpiresInSeconds?: number;
  /** Lifetime of session webhooks, ms; default 90 min. */
  sessionWebhookTtlMs?: number;
}

export interface UserMessageInput {
  chat: 'private' | 'group';
  /** The sender's staff id. */
  userId: string;
  /** Group conversation id; default `cidGROUP1`. */
  conversationId?: string;
  msgtype?: string;
  text?: string;
  /** `content` of picture, file and richText messages. */
  content?: Record<string, unknown>;
  /** Sender id instead of the bot's own (a self echo). */
  senderId?: string;
  /** Omit `senderStaffId` (external users). */
  hasNoStaffId?: boolean;
  /**
   * The message this one quotes (DingTalk's reply): sent as `text.isReplyMsg` and
   * `text.repliedMsg`, fields DingTalk sends but does not document.
   */
  quotedMessageId?: string;
}

export interface Delivered {
  msgId: string;
  chatId: string;
  conversationId: string;
  /** The stream frame's `headers.messageId` (what an ack names). */
  streamMessageId: string;
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** JSON or multipart bodies. */
export async function parseBody(raw: Buffer, contentType: string | undefined): Promise<Record<string, unknown>> {
  if (contentType?.startsWith('multipart/form-data')) {
    const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
    const out: Record<string, unknown> = {};
    for (const [key, value] of form.entries()) {
      out[key] = typeof value === 'string' ? value : { name: value.name, bytes: new Uint8Array(await value.arrayBuffer()) };
    }
    return out;
  }
  const text = raw.toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}
