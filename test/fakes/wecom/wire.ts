import { createCipheriv, randomBytes } from 'node:crypto';

/** FakeWeCom's public shapes and the media encryption WeCom applies to downloads. */

/** One frame the bot sent, as the fake answered it. */
export interface RecordedFrame {
  cmd: string;
  reqId: string;
  body: Record<string, unknown>;
  at: number;
  /** The ack's errcode (0 = ok); `undefined` when the fake did not answer. */
  errcode?: number;
  /** The chat the frame writes into, when it writes into one. */
  chatId?: string;
}

export type FrameFault =
  /** Answered with this errcode (45009 is a rate limit: the chat is then closed for `blockMs`). */
  | { kind: 'errcode'; errcode: number; errmsg?: string; blockMs?: number }
  /** Never answered: the SDK's 5 s ack timeout rejects the call. */
  | { kind: 'silent' }
  /** The socket is cut instead of answering. */
  | { kind: 'drop' };

export interface UserMessageInput {
  chat: 'private' | 'group';
  /** The sender's userid. */
  userId: string;
  /** Group chatid; default `wrGROUP1`. */
  chatId?: string;
  /** Default `text` (`image`/`file`/`mixed` with `media`, `voice` for a dropped type). */
  msgtype?: 'text' | 'image' | 'file' | 'mixed' | 'voice';
  text?: string;
  /** `quote` of the callback, as WeCom sends it (also null, or with null parts). */
  quote?: unknown;
  /** Image or file bytes: served encrypted at a link in the message. */
  media?: Uint8Array;
  /** Mixed messages: their items in order (`media` bytes become images). */
  items?: ({ text: string } | { image: Uint8Array })[];
}

export interface Delivered {
  msgid: string;
  reqId: string;
  /** The adapter's chat id: the userid in a single chat, the chatid in a group. */
  chatId: string;
}

/**
 * WeCom's media encryption (path/101463 "多媒体资源解密"): AES-256-CBC with the message's
 * `aeskey` (base64 of 32 bytes), IV = the key's first 16 bytes, PKCS#7 padding to 32 bytes.
 */
export function encryptMedia(plain: Uint8Array): { encrypted: Buffer; aeskey: string } {
  const key = randomBytes(32);
  const pad = 32 - (plain.byteLength % 32);
  const padded = Buffer.concat([Buffer.from(plain), Buffer.alloc(pad, pad)]);
  const cipher = createCipheriv('aes-256-cbc', key, key.subarray(0, 16));
  cipher.setAutoPadding(false);
  return { encrypted: Buffer.concat([cipher.update(padded), cipher.final()]), aeskey: key.toString('base64') };
}
