import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** One HTTP request the fake answered, as tests inspect it. */
export interface RecordedCall {
  method: string;
  /** Path without the query, e.g. `/ilink/bot/sendmessage`. */
  path: string;
  /** Parsed JSON body (POSTs to the API), else undefined. */
  body: unknown;
  headers: IncomingMessage['headers'];
  /** HTTP status sent, and iLink's `ret` when the body had one. */
  status: number;
  ret?: number;
  /** The chat a send wrote into (`to_user_id`). */
  chatId?: string;
  /** Ms since the epoch, on arrival. */
  at: number;
}

/** A fault for the next request(s) to one endpoint. */
export type Fault =
  | { kind: 'http'; status: number; retryAfterSeconds?: number }
  /** iLink answers 200 with this `ret`/`errcode` (e.g. -14, the session expired). */
  | { kind: 'ret'; code: number }
  /** The socket is destroyed without an answer. */
  | { kind: 'drop' };

/** A message a person sends, as the fake delivers it through `getupdates`. */
export interface UserMessageInput {
  /** iLink user id of the sender, e.g. `alice@im.wechat`. */
  userId: string;
  text?: string;
  /** A bot message (`message_type` 2): our own echo or another bot's. */
  fromBot?: string;
  image?: { bytes: Uint8Array; keyEncoding?: 'hex-field' | 'base64-raw' | 'base64-hex'; declaredSize?: number };
  file?: { bytes: Uint8Array; name: string; declaredSize?: number };
  /** A voice note with this transcript. */
  voiceText?: string;
  /** Raw JSON for the message instead (malformed-event tests). */
  raw?: unknown;
}

export interface Delivered {
  chatId: string;
  messageId: string;
  contextToken: string;
}

/** A bot message as the person's chat shows it. */
export interface FakeBotMessage {
  messageId: string;
  chatId: string;
  text: string;
  /** The person's message whose `context_token` it echoed. */
  replyTo?: string;
  /** A file or image it carried, decrypted. */
  attachment?: { kind: 'image' | 'file'; name?: string; bytes: Uint8Array };
  sentAt: number;
}

export function aesEncrypt(plain: Uint8Array, key: Buffer): Buffer {
  const cipher = createCipheriv('aes-128-ecb', key, null);
  return Buffer.concat([cipher.update(plain), cipher.final()]);
}

export function aesDecrypt(encrypted: Uint8Array, key: Buffer): Buffer {
  const decipher = createDecipheriv('aes-128-ecb', key, null);
  return Buffer.concat([decipher.update(encrypted), decipher.final()]);
}

export async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `X-WECHAT-UIN` as the package sends it: base64 of a uint32 in decimal. */
export function isValidUin(value: string | string[] | undefined): boolean {
  if (typeof value !== 'string') return false;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  return /^\d{1,10}$/.test(decoded) && Number(decoded) <= 0xffffffff;
}
