import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { readLimited } from '../../src/channel/read-limited.js';
import type { ChannelFiles, InboundFile, OutboundFile, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import { httpError, type IlinkClient, refusalCode, refusalError } from './api.js';
import { decryptAesEcb, encryptAesEcb, paddedSize, parseMediaKey } from './crypto.js';
import { extensionOf, type WeChatFileRef } from './inbound-files.js';
import { getUploadUrlResponseSchema, ITEM_TYPE } from './schemas.js';
import type { WeChatSender } from './sender.js';

/** `getuploadurl`'s `media_type` (`UploadMediaType` in the package). */
const MEDIA_TYPE = { image: 1, file: 3 } as const;

/** Image types WeChat shows as pictures; other images go as files. */
const PICTURE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/bmp']);

export interface WeChatFileLimits {
  maxInboundImageBytes: number;
  maxOutboundImageBytes: number;
  maxInboundFileBytes: number;
  maxOutboundFileBytes: number;
  /** Lowercased, without the dot. */
  allowedExtensions: ReadonlySet<string>;
}

export interface WeChatFilesOptions {
  client: IlinkClient;
  sender: WeChatSender;
  cdnBaseUrl: string;
  limits: WeChatFileLimits;
}

function tooLarge(limitBytes: number, direction: 'download' | 'upload'): ChannelError {
  const mib = Math.round(limitBytes / 1024 / 1024);
  return new ChannelError('wechat', 'FILE_TOO_LARGE', `file over the WeChat ${direction} limit of ${mib} MiB`, {
    status: 413,
    userMessage: `exceeds the ${mib} MB ${direction} limit`,
  });
}

function unavailable(reason: string, cause?: unknown): ChannelError {
  return new ChannelError('wechat', 'FILE_UNAVAILABLE', `WeChat file ${reason}`, { cause, status: 502, userMessage: reason });
}

/**
 * Files both ways (reference §6.6). In: the encrypted bytes from the CDN (`full_url`, else
 * `<cdn>/download?encrypted_query_param=`), read with a cap, decrypted with the message's key;
 * images up to 20 MiB, files up to 50 MiB and only with an allowed extension. Out: encrypted with
 * a fresh key, `getuploadurl`, POSTed to the CDN (whose `x-encrypted-param` answer names the
 * upload), then sent as an image or file item with the conversation's `context_token`.
 */
export function createWeChatFiles(options: WeChatFilesOptions): ChannelFiles {
  return {
    download: (file, signal) => download(options, file, signal),
    send: (target, file) => send(options, target, file),
  };
}

function parseRef(file: InboundFile): WeChatFileRef {
  try {
    return JSON.parse(file.ref) as WeChatFileRef;
  } catch {
    throw unavailable('download unavailable');
  }
}

async function download(options: WeChatFilesOptions, file: InboundFile, signal?: AbortSignal): Promise<Uint8Array> {
  const { limits, client, cdnBaseUrl } = options;
  const ref = parseRef(file);
  const limit = ref.kind === 'image' ? limits.maxInboundImageBytes : limits.maxInboundFileBytes;
  if (ref.kind === 'file' && !limits.allowedExtensions.has(extensionOf(file.name))) throw unavailable('file type not allowed');
  if ((file.declaredSize ?? 0) > limit) throw tooLarge(limit, 'download');
  const key = parseMediaKey(ref.hexKey ?? ref.media.aes_key ?? '');
  if (key === undefined) throw unavailable('download unavailable');
  const url = ref.media.full_url || (ref.media.encrypt_query_param ? `${cdnBaseUrl}/download?encrypted_query_param=${encodeURIComponent(ref.media.encrypt_query_param)}` : undefined);
  if (url === undefined) throw unavailable('download unavailable');
  const response = await client.request(url, 'CDN download', { method: 'GET', ...(signal ? { signal } : {}) }).catch((error: unknown) => {
    throw unavailable('download failed', error);
  });
  if (!response.ok) throw unavailable('download failed', httpError(response.status, 'CDN download'));
  // The ciphertext is the plaintext padded to the next 16 bytes.
  const encrypted = await readLimited(response, paddedSize(limit), () => tooLarge(limit, 'download'));
  let plain: Buffer;
  try {
    plain = decryptAesEcb(encrypted, key);
  } catch {
    throw unavailable('download failed');
  }
  if (plain.byteLength > limit) throw tooLarge(limit, 'download');
  return plain;
}

async function send(options: WeChatFilesOptions, target: ReplyTarget, file: OutboundFile): Promise<void> {
  const { limits, client, sender, cdnBaseUrl } = options;
  const isPicture = file.isImage && PICTURE_TYPES.has(file.mimeType);
  if (!isPicture && !limits.allowedExtensions.has(extensionOf(file.name))) {
    throw new ChannelError('wechat', 'CHANNEL_REJECTED', 'WeChat file type not allowed', { status: 415, userMessage: 'file type not allowed' });
  }
  const limit = isPicture ? limits.maxOutboundImageBytes : limits.maxOutboundFileBytes;
  if (file.size > limit) throw tooLarge(limit, 'upload');
  const plain = await readFile(file.hostPath);
  if (plain.byteLength > limit) throw tooLarge(limit, 'upload');
  const key = randomBytes(16);
  const filekey = randomBytes(16).toString('hex');
  const encrypted = encryptAesEcb(plain, key);
  const upload = await client.post(
    'getuploadurl',
    {
      filekey,
      media_type: isPicture ? MEDIA_TYPE.image : MEDIA_TYPE.file,
      to_user_id: target.chatId,
      rawsize: plain.byteLength,
      rawfilemd5: createHash('md5').update(plain).digest('hex'),
      filesize: encrypted.byteLength,
      no_need_thumb: true,
      aeskey: key.toString('hex'),
    },
    getUploadUrlResponseSchema,
  );
  const code = refusalCode(upload);
  if (code !== 0) throw refusalError(code, 'getuploadurl');
  const cdnUrl =
    upload.upload_full_url?.trim() ||
    (upload.upload_param ? `${cdnBaseUrl}/upload?encrypted_query_param=${encodeURIComponent(upload.upload_param)}&filekey=${encodeURIComponent(filekey)}` : undefined);
  if (cdnUrl === undefined) throw new ChannelError('wechat', 'CHANNEL_UNAVAILABLE', 'WeChat getuploadurl gave no upload URL', { status: 502 });
  const response = await client.request(cdnUrl, 'CDN upload', {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: new Uint8Array(encrypted),
  });
  const downloadParam = response.headers.get('x-encrypted-param');
  if (!response.ok) throw httpError(response.status, 'CDN upload', response.headers.get('retry-after'));
  if (!downloadParam) throw new ChannelError('wechat', 'CHANNEL_UNAVAILABLE', 'WeChat CDN upload gave no x-encrypted-param', { status: 502 });
  // The receiving client reads the key as base64 of its hex form (the package's send-media, `encrypt_type` 1).
  const media = { encrypt_query_param: downloadParam, aes_key: Buffer.from(key.toString('hex'), 'ascii').toString('base64'), encrypt_type: 1 };
  if (isPicture) {
    await sender.item(target, { type: ITEM_TYPE.image, image_item: { media, mid_size: encrypted.byteLength } });
  } else {
    await sender.item(target, { type: ITEM_TYPE.file, file_item: { media, file_name: file.name, len: String(plain.byteLength) } });
  }
}
