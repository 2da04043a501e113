import { readLimited } from '../../src/channel/read-limited.js';
import { stat } from 'node:fs/promises';
import { type Api, GrammyError, InputFile } from 'grammy';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelFiles, InboundFile, OutboundFile, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError, describeError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { toTelegramChatId } from './egress.js';
import { toChannelError } from './errors.js';
import { parseTelegramId } from './ids.js';
import { TELEGRAM_LIMITS } from './limits.js';
import type { GroupPacer } from './pacing.js';

const PLATFORM = 'telegram';

/** Why a file did not arrive, as users read it (reference §6.2, verbatim). */
export const TELEGRAM_DOWNLOAD_REASONS = {
  tooLarge: 'exceeds the 20 MB download limit',
  unavailable: 'download unavailable',
  failed: 'download failed',
} as const;

/** Why a file was not sent, as users read it. */
export const TELEGRAM_UPLOAD_REASONS = {
  tooLarge: 'exceeds the 50 MB upload limit',
  unreadable: 'file could not be read',
} as const;

/** Our bound on one download, getFile excluded (DeerFlow uses the same 20 s). */
const DEFAULT_DOWNLOAD_TIMEOUT_MS = 20_000;
/** Tries per file while Telegram answers 429 (each waits out `retry_after`), as for final texts. */
const SEND_ATTEMPTS = 5;
/**
 * Formats `sendPhoto` shows as a photo. Others (SVG, BMP, TIFF, animated GIF) go as documents,
 * which keeps them intact.
 */
const PHOTO_MIME_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/webp']);

function downloadTooLarge(message: string): ChannelError {
  return new ChannelError(PLATFORM, 'FILE_TOO_LARGE', message, { status: 413, userMessage: TELEGRAM_DOWNLOAD_REASONS.tooLarge });
}

function downloadUnavailable(message: string, cause?: unknown): ChannelError {
  return new ChannelError(PLATFORM, 'FILE_UNAVAILABLE', message, {
    status: 502,
    userMessage: TELEGRAM_DOWNLOAD_REASONS.unavailable,
    cause,
  });
}

function downloadFailed(message: string, cause?: unknown): ChannelError {
  return new ChannelError(PLATFORM, 'FILE_UNAVAILABLE', message, {
    status: 502,
    userMessage: TELEGRAM_DOWNLOAD_REASONS.failed,
    cause,
  });
}

/** A 400 answer, as `toChannelError` summarizes it in `cause`. */
function isBadRequest(error: unknown): boolean {
  return error instanceof ChannelError && (error.cause as { errorCode?: unknown } | undefined)?.errorCode === 400;
}

/**
 * What may be said about a failed fetch: names and error codes only. Node's messages can quote
 * the URL, and the download URL holds the bot token.
 */
function fetchFailureSummary(error: unknown): { name: string; code?: string } {
  const name = error instanceof Error ? error.name : typeof error;
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' ? { name, code } : { name };
}

export interface TelegramFilesOptions {
  api: Api;
  /** Part of every download URL; never logged. */
  token: string;
  /** Bot API root without a trailing slash, e.g. `https://api.telegram.org`. */
  apiRoot: string;
  /** Shared with ingress and egress, keyed by chat id: a 429 anywhere holds every send to that chat. */
  gate: RateGate;
  /** A file sent to a group takes a place of its 20 messages a minute. */
  pacer: GroupPacer;
  logger: Logger;
  /** Bound on one download after getFile, in milliseconds; default 20000. */
  downloadTimeoutMs?: number;
}

/**
 * File transfer through the Bot API (reference §6.2).
 *
 * - `download` refuses a declared size over 20,000,000 bytes, calls getFile, refuses a resolved
 *   size over the limit, then fetches `<api_root>/file/bot<token>/<file_path>` within 20 s,
 *   counting bytes as they arrive and aborting past the limit. Rejects with `ChannelError`
 *   `FILE_TOO_LARGE` (`exceeds the 20 MB download limit`) or `FILE_UNAVAILABLE` (`download
 *   unavailable` when getFile refuses or gives no path, `download failed` on HTTP or network
 *   errors); with the signal's reason when `signal` aborts. Neither errors nor logs carry the
 *   file id, the file path or the download URL.
 * - `send` refuses files over 50 MB (`FILE_TOO_LARGE`, no API call), sends JPEG/PNG/WebP up to
 *   10 MB with sendPhoto (falling back to sendDocument when Telegram answers 400 to the photo) and the
 *   rest with sendDocument, as a reply to `target.replyTo.messageId` when given (still sent if
 *   that message is gone). It waits for the chat's rate gate, and on a 429 blocks it and retries,
 *   5 tries in all. Other failures reject with `toChannelError`'s translation.
 */
export function createTelegramFiles(options: TelegramFilesOptions): ChannelFiles {
  return new TelegramFiles(options);
}

class TelegramFiles implements ChannelFiles {
  private readonly timeoutMs: number;

  constructor(private readonly options: TelegramFilesOptions) {
    this.timeoutMs = options.downloadTimeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS;
  }

  async download(file: InboundFile, signal?: AbortSignal): Promise<Uint8Array> {
    try {
      if (file.declaredSize !== undefined && file.declaredSize > TELEGRAM_LIMITS.maxDownloadBytes) {
        throw downloadTooLarge(`Telegram file declared ${file.declaredSize} bytes, over the download limit`);
      }
      const filePath = await this.resolveFilePath(file.ref, signal);
      return await this.fetchBytes(filePath, signal);
    } catch (error) {
      if (error instanceof ChannelError) {
        this.options.logger.warn({ err: describeError(error), mimeType: file.mimeType }, 'Telegram file not downloaded');
      }
      throw error;
    }
  }

  async send(target: ReplyTarget, file: OutboundFile): Promise<void> {
    const chatId = toTelegramChatId(target.chatId);
    const size = await this.sizeOnDisk(file);
    if (size > TELEGRAM_LIMITS.maxUploadBytes) {
      throw new ChannelError(PLATFORM, 'FILE_TOO_LARGE', `file of ${size} bytes is over Telegram's upload limit`, {
        status: 413,
        userMessage: TELEGRAM_UPLOAD_REASONS.tooLarge,
      });
    }
    const isPhoto = PHOTO_MIME_TYPES.has(file.mimeType) && size <= TELEGRAM_LIMITS.maxPhotoBytes;
    if (isPhoto) {
      try {
        await this.sendWithRetries(target, () =>
          this.options.api.sendPhoto(chatId, this.inputFile(file), this.replyOptions(target)),
        );
        return;
      } catch (error) {
        // Telegram answers 400 to photos it cannot show (e.g. PHOTO_INVALID_DIMENSIONS); a document still arrives.
        if (!isBadRequest(error)) throw error;
        this.options.logger.info({ chatId: target.chatId, err: describeError(error) }, 'Telegram photo refused; sending as document');
      }
    }
    await this.sendWithRetries(target, () =>
      this.options.api.sendDocument(chatId, this.inputFile(file), this.replyOptions(target)),
    );
  }

  /** @throws ChannelError FILE_TOO_LARGE / FILE_UNAVAILABLE; the signal's reason when aborted. */
  private async resolveFilePath(fileId: string, signal: AbortSignal | undefined): Promise<string> {
    let resolved: Awaited<ReturnType<Api['getFile']>>;
    try {
      // grammY types its signal with the abort-controller shim; the runtime object is the standard one.
      resolved = await this.options.api.getFile(fileId, signal as Parameters<Api['getFile']>[1]);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof GrammyError) {
        const summary = `${error.error_code}: ${error.description}`;
        if (error.description.includes('file is too big')) throw downloadTooLarge(`Telegram getFile refused (${summary})`);
        throw downloadUnavailable(`Telegram getFile failed (${summary})`, { errorCode: error.error_code, description: error.description });
      }
      throw downloadFailed('Telegram getFile could not reach Telegram', fetchFailureSummary(error));
    }
    if (resolved.file_size !== undefined && resolved.file_size > TELEGRAM_LIMITS.maxDownloadBytes) {
      throw downloadTooLarge(`Telegram getFile reports ${resolved.file_size} bytes, over the download limit`);
    }
    if (!resolved.file_path) throw downloadUnavailable('Telegram getFile returned no file_path');
    return resolved.file_path;
  }

  /** @throws ChannelError FILE_TOO_LARGE / FILE_UNAVAILABLE; the signal's reason when aborted. */
  private async fetchBytes(filePath: string, signal: AbortSignal | undefined): Promise<Uint8Array> {
    const { apiRoot, token } = this.options;
    const encodedPath = filePath.split('/').map(encodeURIComponent).join('/');
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
    const whyFailed = (error: unknown): unknown => {
      if (signal?.aborted) return signal.reason;
      if (timeout.aborted) return downloadFailed(`Telegram file download timed out after ${this.timeoutMs} ms`);
      return downloadFailed('Telegram file download failed (network)', fetchFailureSummary(error));
    };
    let response: Response;
    try {
      response = await fetch(`${apiRoot}/file/bot${token}/${encodedPath}`, { signal: combined });
    } catch (error) {
      throw whyFailed(error);
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw downloadFailed(`Telegram file download failed (HTTP ${response.status})`);
    }
    const announced = Number(response.headers.get('content-length') ?? Number.NaN);
    if (announced > TELEGRAM_LIMITS.maxDownloadBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw downloadTooLarge(`Telegram file download announced ${announced} bytes, over the download limit`);
    }
    try {
      return await readLimited(response, TELEGRAM_LIMITS.maxDownloadBytes, () =>
        downloadTooLarge(`Telegram file download passed ${TELEGRAM_LIMITS.maxDownloadBytes} bytes; stopped`),
      );
    } catch (error) {
      if (error instanceof ChannelError) throw error;
      throw whyFailed(error);
    }
  }

  /** Retries on 429 after the gate reopens; every try builds a fresh `InputFile` (a file is read per request). */
  private async sendWithRetries(target: ReplyTarget, call: () => Promise<unknown>): Promise<void> {
    const { gate, logger } = this.options;
    for (let attempt = 1; ; attempt++) {
      await gate.waitUntilOpen(target.chatId);
      try {
        await this.options.pacer.send(target.chatId, call);
        return;
      } catch (error) {
        const channelError = toChannelError(error);
        if (channelError.retryAfterMs === undefined) throw channelError;
        gate.block(target.chatId, channelError.retryAfterMs);
        if (attempt >= SEND_ATTEMPTS) throw channelError;
        logger.warn({ chatId: target.chatId, retryAfterMs: channelError.retryAfterMs, attempt }, 'Telegram file send rate limited');
      }
    }
  }

  private inputFile(file: OutboundFile): InputFile {
    // grammY refuses line breaks in upload names; other controls would garble the multipart header.
    return new InputFile(file.hostPath, file.name.replace(/\p{Cc}/gu, '_'));
  }

  private replyOptions(target: ReplyTarget) {
    const messageId = target.replyTo.messageId;
    if (messageId === undefined) return {};
    return { reply_parameters: { message_id: parseTelegramId(messageId), allow_sending_without_reply: true } };
  }

  /** The size now on disk: the file is read at send time, so this is what Telegram would get. */
  private async sizeOnDisk(file: OutboundFile): Promise<number> {
    try {
      const info = await stat(file.hostPath);
      if (!info.isFile()) throw new Error('not a regular file');
      return info.size;
    } catch (error) {
      throw new ChannelError(PLATFORM, 'FILE_UNAVAILABLE', 'outbound file could not be read', {
        status: 500,
        userMessage: TELEGRAM_UPLOAD_REASONS.unreadable,
        cause: { name: error instanceof Error ? error.name : typeof error },
      });
    }
  }
}

