import { readLimited } from '../../src/channel/read-limited.js';
import { readFile, stat } from 'node:fs/promises';
import type { Message } from 'discord.js';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelFiles, InboundFile, OutboundFile, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { DiscordApi } from './api.js';
import { replyReferenceFor } from './egress.js';
import { DISCORD_LIMITS } from './limits.js';

const PLATFORM = 'discord';

/** Why a file did not arrive or was not sent, as users read it. */
export const DISCORD_FILE_REASONS = {
  tooLarge: 'exceeds the 25 MB download limit',
  unavailable: 'download unavailable',
  failed: 'download failed',
  uploadTooLarge: 'exceeds the 10 MB upload limit',
} as const;

/** Our bound on one download. */
const DOWNLOAD_TIMEOUT_MS = 20_000;

/** What `InboundFile.ref` holds: where the attachment is, to refresh its signed URL. */
interface AttachmentRef {
  channelId: string;
  messageId: string;
  attachmentId: string;
  url: string;
}

/** A message's attachments as `InboundFile`s (ref: channel, message, attachment and URL as JSON). */
export function discordInboundFiles(message: Message): InboundFile[] {
  return [...message.attachments.values()].map((attachment) => {
    const mimeType = attachment.contentType ?? 'application/octet-stream';
    const ref: AttachmentRef = { channelId: message.channelId, messageId: message.id, attachmentId: attachment.id, url: attachment.url };
    return {
      name: attachment.name || `discord-attachment-${attachment.id}.bin`,
      mimeType,
      isImage: mimeType.startsWith('image/'),
      declaredSize: attachment.size,
      ref: JSON.stringify(ref),
    };
  });
}

function tooLarge(message: string, userMessage: string): ChannelError {
  return new ChannelError(PLATFORM, 'FILE_TOO_LARGE', message, { status: 413, userMessage });
}

function unavailable(message: string, reason: string, cause?: unknown): ChannelError {
  return new ChannelError(PLATFORM, 'FILE_UNAVAILABLE', message, { status: 502, userMessage: reason, cause });
}

export interface DiscordFilesOptions {
  api: DiscordApi;
  gate: RateGate;
  logger: Logger;
  maxDownloadBytes?: number;
}

/**
 * Attachments both ways. Downloads fetch the attachment's signed CDN URL; when it has expired
 * (Discord signs URLs with `ex`/`is`/`hm` and they lapse) the message is fetched again for a
 * fresh one. Sizes are checked on the declared size, `content-length` and the bytes received.
 * Uploads over 10 MiB are refused before any request.
 */
export function createDiscordFiles(options: DiscordFilesOptions): ChannelFiles {
  const { api, gate, logger } = options;
  const maxBytes = options.maxDownloadBytes ?? DISCORD_LIMITS.maxDownloadBytes;
  return {
    async download(file: InboundFile, signal?: AbortSignal): Promise<Uint8Array> {
      if (file.declaredSize !== undefined && file.declaredSize > maxBytes) {
        throw tooLarge('Discord attachment over the download limit', DISCORD_FILE_REASONS.tooLarge);
      }
      const ref = parseRef(file.ref);
      let response = await fetchAttachment(ref.url, signal);
      if (response.status === 403 || response.status === 404) {
        await response.body?.cancel();
        const fresh = (await api.getMessage(ref.channelId, ref.messageId)).attachments.find((a) => a.id === ref.attachmentId);
        if (!fresh) throw unavailable('Discord attachment is gone', DISCORD_FILE_REASONS.unavailable);
        response = await fetchAttachment(fresh.url, signal);
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw unavailable(`Discord attachment download failed (HTTP ${response.status})`, DISCORD_FILE_REASONS.failed);
      }
      // A declared size over the cap is refused before reading; an under-declared one stops mid-stream.
      const declared = Number(response.headers.get('content-length') ?? Number.NaN);
      const overLimit = () => tooLarge('Discord attachment over the download limit', DISCORD_FILE_REASONS.tooLarge);
      if (declared > maxBytes) {
        await response.body?.cancel();
        throw overLimit();
      }
      return readLimited(response, maxBytes, overLimit);
    },

    async send(target: ReplyTarget, file: OutboundFile): Promise<void> {
      if (file.size > DISCORD_LIMITS.maxUploadBytes) {
        throw tooLarge('file over Discord upload limit', DISCORD_FILE_REASONS.uploadTooLarge);
      }
      const stats = await stat(file.hostPath);
      if (stats.size > DISCORD_LIMITS.maxUploadBytes) throw tooLarge('file over Discord upload limit', DISCORD_FILE_REASONS.uploadTooLarge);
      const data = await readFile(file.hostPath);
      await gate.waitUntilOpen(target.chatId);
      try {
        await api.sendFile(target.chatId, { name: file.name, data, contentType: file.mimeType }, replyReferenceFor(target.chatId, target.replyTo.messageId));
      } catch (error) {
        logger.warn({ chatId: target.chatId, err: describeError(error) }, 'Discord file not sent');
        throw error;
      }
    },
  };
}

function parseRef(ref: string): AttachmentRef {
  try {
    const parsed = JSON.parse(ref) as AttachmentRef;
    if (typeof parsed.url === 'string' && typeof parsed.channelId === 'string') return parsed;
  } catch {
    // Falls through to the error below.
  }
  throw unavailable('not a Discord attachment reference', DISCORD_FILE_REASONS.unavailable);
}

async function fetchAttachment(url: string, signal?: AbortSignal): Promise<Response> {
  const timeout = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
  try {
    return await fetch(url, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (error) {
    // Names only: the signed URL is a credential of sorts and stays out of errors.
    const name = error instanceof Error ? error.name : typeof error;
    throw unavailable('Discord attachment download failed', DISCORD_FILE_REASONS.failed, { name });
  }
}

