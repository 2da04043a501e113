import { readFile } from 'node:fs/promises';
import { decryptFile } from '@wecom/aibot-node-sdk';
import { readLimited } from '../../src/channel/read-limited.js';
import type { ChannelFiles, InboundFile, OutboundFile, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import { WECOM_LIMITS } from './limits.js';
import type { MediaRef } from './parse.js';
import type { WeComSender } from './relay.js';

function tooLarge(limitBytes: number): ChannelError {
  const mib = Math.round(limitBytes / 1024 / 1024);
  return new ChannelError('wecom', 'FILE_TOO_LARGE', `file over the WeCom limit of ${mib} MiB`, { status: 413, userMessage: `File is larger than ${mib} MiB.` });
}

function unavailable(cause?: unknown): ChannelError {
  return new ChannelError('wecom', 'FILE_UNAVAILABLE', 'WeCom file could not be downloaded', { cause, status: 502, userMessage: 'File could not be downloaded.' });
}

/**
 * Files both ways (reference §6.7). In: the message's link (valid 5 minutes) read with a cap,
 * then decrypted with its `aeskey` (AES-256-CBC, the SDK's `decryptFile`). Out, after the final:
 * images up to 2 MiB as images, anything else up to 20 MiB as a file, uploaded over the long
 * connection in 512 KiB chunks (`aibot_upload_media_*`, the SDK's `uploadMedia`) and sent with
 * `aibot_send_msg`.
 */
export function createWeComFiles(connection: WeComSender): ChannelFiles {
  return {
    download: (file, signal) => download(file, signal),
    send: (target, file) => send(connection, target, file),
  };
}

async function download(file: InboundFile, signal?: AbortSignal): Promise<Uint8Array> {
  const limit = WECOM_LIMITS.maxDownloadBytes;
  let ref: MediaRef;
  try {
    ref = JSON.parse(file.ref) as MediaRef;
  } catch (error) {
    throw unavailable(error);
  }
  const response = await fetch(ref.url, signal ? { signal } : {}).catch((error: unknown) => {
    throw unavailable(error);
  });
  if (!response.ok) throw unavailable();
  if (Number(response.headers.get('content-length') ?? 0) > limit) throw tooLarge(limit);
  const encrypted = await readLimited(response, limit, () => tooLarge(limit)).catch((error: unknown) => {
    throw error instanceof ChannelError ? error : unavailable(error);
  });
  if (!ref.aeskey) return encrypted;
  try {
    return decryptFile(Buffer.from(encrypted), ref.aeskey);
  } catch (error) {
    throw unavailable(error);
  }
}

async function send(connection: WeComSender, target: ReplyTarget, file: OutboundFile): Promise<void> {
  const isImage = file.isImage && file.size <= WECOM_LIMITS.maxImageUploadBytes;
  if (file.size > WECOM_LIMITS.maxFileUploadBytes) throw tooLarge(WECOM_LIMITS.maxFileUploadBytes);
  const bytes = await readFile(file.hostPath);
  // The file may have grown since it was listed.
  if (bytes.byteLength > WECOM_LIMITS.maxFileUploadBytes) throw tooLarge(WECOM_LIMITS.maxFileUploadBytes);
  await connection.sendMedia(target.chatId, isImage && bytes.byteLength <= WECOM_LIMITS.maxImageUploadBytes ? 'image' : 'file', file.name, bytes);
}
