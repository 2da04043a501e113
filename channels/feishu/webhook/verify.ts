import { createDecipheriv, createHash, timingSafeEqual } from 'node:crypto';

/**
 * HTTP event callbacks (https://open.feishu.cn/document/server-docs/event-subscription-guide/event-subscription-configure-/encrypt-key-encryption-configuration-case):
 * the signature is sha256hex(timestamp + nonce + encryptKey + raw body), the body
 * `{"encrypt": base64(iv ‖ AES-256-CBC(sha256(encryptKey), json))}`. Pure; `nowMs` injected.
 * The SDK re-serializes the parsed body to check signatures and never compares the verification
 * token, so we do both ourselves, on the raw bytes.
 */

export type VerifiedCallback =
  | { isValid: true; body: Record<string, unknown> }
  | { isValid: false; reason: 'missing headers' | 'stale timestamp' | 'bad signature' | 'undecryptable' | 'bad token' };

export interface VerifyOptions {
  rawBody: string;
  timestamp: string | undefined;
  nonce: string | undefined;
  signature: string | undefined;
  encryptKey: string;
  /** Compared with the body's token when set. */
  verificationToken?: string;
  nowMs: number;
  windowMs: number;
}

/**
 * A signed callback inside the window whose body decrypts (and carries the verification token,
 * when one is configured). One exception: the `url_verification` Feishu sends when the request
 * URL is saved may come without signature headers (the Lark SDK answers it before checking any);
 * it is accepted when it decrypts under the encrypt key, which only Feishu and we hold, and
 * answering it runs nothing.
 */
export function verifyFeishuCallback(options: VerifyOptions): VerifiedCallback {
  const { timestamp, nonce, signature } = options;
  if (timestamp === undefined && nonce === undefined && signature === undefined) {
    const body = decryptBody(options.rawBody, options.encryptKey);
    const isChallenge = body?.type === 'url_verification' && typeof body.challenge === 'string';
    if (body === undefined || !isChallenge) return { isValid: false, reason: 'missing headers' };
    return hasToken(body, options) ? { isValid: true, body } : { isValid: false, reason: 'bad token' };
  }
  if (timestamp === undefined || nonce === undefined || signature === undefined) return { isValid: false, reason: 'missing headers' };
  const seconds = Number(timestamp);
  if (!Number.isFinite(seconds) || Math.abs(options.nowMs - seconds * 1000) > options.windowMs) return { isValid: false, reason: 'stale timestamp' };
  const expected = createHash('sha256').update(timestamp + nonce + options.encryptKey + options.rawBody).digest();
  const given = Buffer.from(signature, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { isValid: false, reason: 'bad signature' };
  const body = decryptBody(options.rawBody, options.encryptKey);
  if (body === undefined) return { isValid: false, reason: 'undecryptable' };
  return hasToken(body, options) ? { isValid: true, body } : { isValid: false, reason: 'bad token' };
}

function hasToken(body: Record<string, unknown>, options: VerifyOptions): boolean {
  return options.verificationToken === undefined || tokenOf(body) === options.verificationToken;
}

/** The decrypted JSON of `{"encrypt": …}`; undefined when it is not that. */
export function decryptBody(rawBody: string, encryptKey: string): Record<string, unknown> | undefined {
  try {
    const outer = JSON.parse(rawBody) as { encrypt?: unknown };
    if (typeof outer.encrypt !== 'string') return undefined;
    const data = Buffer.from(outer.encrypt, 'base64');
    const key = createHash('sha256').update(encryptKey).digest();
    const decipher = createDecipheriv('aes-256-cbc', key, data.subarray(0, 16));
    const plain = Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]).toString('utf8');
    const parsed = JSON.parse(plain) as unknown;
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Schema 2.0 events carry `header.token`; `url_verification` and 1.0 bodies a top-level `token`. */
function tokenOf(body: Record<string, unknown>): unknown {
  const header = body.header as { token?: unknown } | undefined;
  return header?.token ?? body.token;
}
