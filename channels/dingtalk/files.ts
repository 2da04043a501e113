import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { ChannelFiles, InboundFile, OutboundFile, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import type { DingTalkApi } from './api.js';
import { DINGTALK_LIMITS } from './limits.js';
import type { RobotSender } from './sender.js';

function tooLarge(limitBytes: number): ChannelError {
  const mib = Math.round(limitBytes / 1024 / 1024);
  return new ChannelError('dingtalk', 'FILE_TOO_LARGE', `file over the DingTalk limit of ${mib} MiB`, { status: 413, userMessage: `File is larger than ${mib} MiB.` });
}

function unavailable(cause?: unknown): ChannelError {
  return new ChannelError('dingtalk', 'FILE_UNAVAILABLE', 'DingTalk file could not be downloaded', { cause, status: 502, userMessage: 'File could not be downloaded.' });
}

/**
 * Files both ways (reference §6.5). In: the download code is exchanged for a URL
 * (`/v1.0/robot/messageFiles/download`), then read with a 50 MiB cap on the declared and received
 * size. Out: ≤ 20 MiB, uploaded as media, then sent as `sampleImageMsg` or `sampleFile` through
 * the robot API.
 */
export function createDingTalkFiles(api: DingTalkApi, sender: RobotSender): ChannelFiles {
  return {
    download: (file, signal) => download(api, file, signal),
    send: (target, file) => send(api, sender, target, file),
  };
}

async function download(api: DingTalkApi, file: InboundFile, signal?: AbortSignal): Promise<Uint8Array> {
  const limit = DINGTALK_LIMITS.maxDownloadBytes;
  if ((file.declaredSize ?? 0) > limit) throw tooLarge(limit);
  let url: string | undefined;
  try {
    ({ downloadUrl: url } = await api.call<{ downloadUrl?: string }>('POST', '/v1.0/robot/messageFiles/download', { downloadCode: file.ref, robotCode: api.robotCode }));
  } catch (error) {
    throw unavailable(error);
  }
  if (!url) throw unavailable();
  const response = await api.fetch(url, 'file download', { ...(signal ? { signal } : {}) }).catch((error: unknown) => {
    throw unavailable(error);
  });
  if (!response.ok || !response.body) throw unavailable();
  if (Number(response.headers.get('content-length') ?? 0) > limit) throw tooLarge(limit);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge(limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function send(api: DingTalkApi, sender: RobotSender, target: ReplyTarget, file: OutboundFile): Promise<void> {
  if (file.size > DINGTALK_LIMITS.maxUploadBytes) throw tooLarge(DINGTALK_LIMITS.maxUploadBytes);
  const bytes = await readFile(file.hostPath);
  if (bytes.byteLength > DINGTALK_LIMITS.maxUploadBytes) throw tooLarge(DINGTALK_LIMITS.maxUploadBytes);
  const mediaId = await api.upload(file.isImage ? 'image' : 'file', file.name, bytes);
  if (file.isImage) await sender.robot(target, 'sampleImageMsg', { photoURL: mediaId });
  else await sender.robot(target, 'sampleFile', { mediaId, fileName: file.name, fileType: extname(file.name).slice(1) || 'bin' });
}
