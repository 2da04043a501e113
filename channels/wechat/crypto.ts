import { createCipheriv, createDecipheriv } from 'node:crypto';

/**
 * AES-128-ECB with PKCS#7 padding, as the WeChat CDN stores media (the package's
 * `src/cdn/aes-ecb.ts`). ECB is the platform's choice, not ours: the key is per file.
 */
export function encryptAesEcb(plain: Uint8Array, key: Buffer): Buffer {
  const cipher = createCipheriv('aes-128-ecb', key, null);
  return Buffer.concat([cipher.update(plain), cipher.final()]);
}

/** @throws Error when the padding is wrong (a wrong key, a truncated download). */
export function decryptAesEcb(encrypted: Uint8Array, key: Buffer): Buffer {
  const decipher = createDecipheriv('aes-128-ecb', key, null);
  return Buffer.concat([decipher.update(encrypted), decipher.final()]);
}

/** Size after PKCS#7 padding: always at least one byte more, up to the next 16. */
export function paddedSize(plainSize: number): number {
  return Math.ceil((plainSize + 1) / 16) * 16;
}

/**
 * A media key from the encodings seen on the wire (the package's `parseAesKey`): 32 hex
 * characters (`image_item.aeskey`), base64 of the 16 raw bytes (images' `media.aes_key`), or
 * base64 of those 32 hex characters (files, voice, video). `undefined` when it is none of them.
 */
export function parseMediaKey(encoded: string): Buffer | undefined {
  if (/^[0-9a-fA-F]{32}$/.test(encoded)) return Buffer.from(encoded, 'hex');
  const decoded = Buffer.from(encoded, 'base64');
  if (decoded.length === 16) return decoded;
  const ascii = decoded.toString('ascii');
  if (decoded.length === 32 && /^[0-9a-fA-F]{32}$/.test(ascii)) return Buffer.from(ascii, 'hex');
  return undefined;
}
