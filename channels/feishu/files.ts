import { readFile } from 'node:fs/promises';
import type { ChannelFiles, InboundFile, OutboundFile, ReplyTarget, RequestWindow } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { FeishuApi, ResourceType } from './api.js';
import { FEISHU_LIMITS } from './limits.js';

/** What `InboundFile.ref` holds: the message and the resource key (message resources are read per message). */
export interface FeishuFileRef {
  messageId: string;
  key: string;
  type: ResourceType;
}

export function encodeFileRef(ref: FeishuFileRef): string {
  return JSON.stringify(ref);
}

export function decodeFileRef(ref: string): FeishuFileRef | undefined {
  try {
    const parsed = JSON.parse(ref) as Partial<FeishuFileRef>;
    if (typeof parsed.messageId === 'string' && typeof parsed.key === 'string' && (parsed.type === 'image' || parsed.type === 'file')) {
      return { messageId: parsed.messageId, key: parsed.key, type: parsed.type };
    }
  } catch {
    // Not ours.
  }
  return undefined;
}

/** `file_type` of im/v1/files by extension (reference §6.4). */
export function feishuFileType(name: string): 'pdf' | 'doc' | 'xls' | 'ppt' | 'stream' {
  const extension = name.toLowerCase().split('.').pop() ?? '';
  if (['xls', 'xlsx', 'csv'].includes(extension)) return 'xls';
  if (['ppt', 'pptx'].includes(extension)) return 'ppt';
  if (extension === 'pdf') return 'pdf';
  if (['doc', 'docx'].includes(extension)) return 'doc';
  return 'stream';
}

const tooLarge = (what: string, limit: number): ChannelError =>
  new ChannelError('feishu', 'FILE_TOO_LARGE', `${what} over ${limit} bytes`, { status: 413, userMessage: `File is larger than Feishu allows (${Math.floor(limit / 1024 / 1024)} MiB).` });

/**
 * Files in: message resources (`im/v1/messages/{id}/resources/{key}`), capped at 30 MiB. Out:
 * images ≤ 10 MiB (uploaded as `image_type=message`), other files ≤ 30 MiB (typed by extension),
 * then sent as a reply to the person's message (or into the chat).
 */
export function createFeishuFiles(options: { api: FeishuApi; pacer: RequestWindow; logger: Logger }): ChannelFiles {
  const { api, pacer } = options;
  return {
    async download(file: InboundFile, signal?: AbortSignal): Promise<Uint8Array> {
      const ref = decodeFileRef(file.ref);
      if (ref === undefined) throw new ChannelError('feishu', 'FILE_UNAVAILABLE', 'not a Feishu file reference', { userMessage: 'File could not be read.' });
      if (file.declaredSize !== undefined && file.declaredSize > FEISHU_LIMITS.maxDownloadBytes) throw tooLarge('declared size', FEISHU_LIMITS.maxDownloadBytes);
      let bytes: Uint8Array;
      try {
        bytes = await api.downloadResource(ref.messageId, ref.key, ref.type, signal);
      } catch (error) {
        throw new ChannelError('feishu', 'FILE_UNAVAILABLE', 'Feishu message resource not downloaded', { cause: error, userMessage: 'File could not be downloaded from Feishu.' });
      }
      if (bytes.byteLength > FEISHU_LIMITS.maxDownloadBytes) throw tooLarge('download', FEISHU_LIMITS.maxDownloadBytes);
      return bytes;
    },
    async send(target: ReplyTarget, file: OutboundFile): Promise<void> {
      const limit = file.isImage ? FEISHU_LIMITS.maxImageBytes : FEISHU_LIMITS.maxFileBytes;
      if (file.size > limit) throw tooLarge(file.isImage ? 'image' : 'file', limit);
      const bytes = await readFile(file.hostPath);
      if (bytes.byteLength === 0) throw new ChannelError('feishu', 'FILE_UNAVAILABLE', 'empty file', { userMessage: 'Feishu does not accept empty files.' });
      if (bytes.byteLength > limit) throw tooLarge(file.isImage ? 'image' : 'file', limit);
      const [msgType, content] = file.isImage
        ? ['image', JSON.stringify({ image_key: await api.uploadImage(bytes) })]
        : ['file', JSON.stringify({ file_key: await api.uploadFile(bytes, file.name, feishuFileType(file.name)) })];
      const parent = target.replyTo.messageId;
      await pacer.run(target.chatId, () =>
        parent === undefined ? api.createMessage(target.chatId, msgType, content) : api.replyMessage(parent, msgType, content),
      );
    },
  };
}
