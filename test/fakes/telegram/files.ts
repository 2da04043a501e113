import type { ServerResponse } from 'node:http';
import type { Document, File, PhotoSize } from 'grammy/types';
import { ApiFailure } from './chats.js';
import type { UploadedPart } from './wire.js';

/**
 * The files the fake Telegram knows: what users sent (served by getFile and the download URL)
 * and what the bot uploaded (sendPhoto, sendDocument).
 */

/** getFile: "bots can download files of up to 20MB in size" (https://core.telegram.org/bots/api#getfile). */
export const MAX_DOWNLOAD_BYTES = 20_000_000;
/** sendDocument: "up to 50 MB" (https://core.telegram.org/bots/api#senddocument). */
export const MAX_UPLOAD_BYTES = 50_000_000;
/** sendPhoto: "The photo must be at most 10 MB in size" (https://core.telegram.org/bots/api#sendphoto). */
export const MAX_PHOTO_BYTES = 10_000_000;

/** Bot API descriptions for files, verbatim as client libraries report them. */
export const FILE_ERRORS = {
  tooBig: 'Bad Request: file is too big',
  invalidFileId: 'Bad Request: invalid file_id',
  wrongFile: 'Bad Request: wrong file identifier/HTTP URL specified',
  /** Undocumented: what uploads over the limit get (nginx in front of the Bot API). */
  entityTooLarge: 'Request Entity Too Large',
  /** Undocumented: the MTProto error client libraries report for photos Telegram will not store. */
  photoInvalid: 'Bad Request: PHOTO_SAVE_FILE_INVALID',
  empty: 'Bad Request: file must be non-empty',
} as const;

/** A file a user sends, and how the fake should behave when the bot fetches it. */
export interface FakeFileInput {
  bytes: Uint8Array;
  /** `file_size` in the message; default the byte count; `null` leaves it out. */
  declaredSize?: number | null;
  /** `file_size` getFile answers with; default the byte count. */
  resolvedSize?: number;
  /**
   * How getFile answers: with the file (`answer`), `400 file is too big` (`too-big`), or with no
   * `file_path` (`no-path`). Default: `too-big` when the bytes are over 20 MB, as Telegram does.
   */
  getFile?: 'answer' | 'too-big' | 'no-path';
  /**
   * How the download URL answers: the bytes with `content-length` (default), the bytes chunked
   * without it (so only counting can catch a size lie), half the bytes and then nothing until the
   * client gives up (`stall`), or HTTP 500.
   */
  serve?: 'bytes' | 'chunked' | 'stall' | 500;
}

export interface StoredFile {
  fileId: string;
  fileUniqueId: string;
  filePath: string;
  bytes: Uint8Array;
  input: FakeFileInput;
}

/** One file the bot uploaded, as the fake received it. */
export interface UploadRecord {
  method: 'sendPhoto' | 'sendDocument';
  chatId: number;
  /** The multipart part's file name. */
  fileName: string;
  bytes: Buffer;
  /** `reply_parameters.message_id`, when the bot asked to reply. */
  replyTo?: number;
  /** Arrival time, ms since the epoch. */
  at: number;
}

/** One GET of a download URL. */
export interface DownloadRecord {
  filePath: string;
  status: number;
  at: number;
}

function declaredSizeOf(file: StoredFile): { file_size?: number } {
  const declared = file.input.declaredSize === undefined ? file.bytes.byteLength : file.input.declaredSize;
  return declared === null ? {} : { file_size: declared };
}

/** Files by `file_id` and `file_path`, plus the record of downloads and uploads. */
export class FileStore {
  readonly uploads: UploadRecord[] = [];
  readonly downloads: DownloadRecord[] = [];
  private readonly byId = new Map<string, StoredFile>();
  private readonly byPath = new Map<string, StoredFile>();
  private nextId = 1;

  /** Stores a file under a fresh opaque `file_id` and a `file_path` in `folder`. */
  add(input: FakeFileInput, folder: 'photos' | 'documents', extension: string): StoredFile {
    const n = this.nextId++;
    const stored: StoredFile = {
      // Real ids are long opaque base64url strings; a distinctive one lets tests look for leaks.
      fileId: `AgACAgIAAxkBAAI${n}fAkEfIlEiD${Math.random().toString(36).slice(2, 10)}`,
      fileUniqueId: `AQAD${n}`,
      filePath: `${folder}/file_${n}.${extension}`,
      bytes: input.bytes,
      input,
    };
    this.byId.set(stored.fileId, stored);
    this.byPath.set(stored.filePath, stored);
    return stored;
  }

  photoSize(input: FakeFileInput & { width: number; height: number }): PhotoSize {
    const stored = this.add(input, 'photos', 'jpg');
    return {
      file_id: stored.fileId,
      file_unique_id: stored.fileUniqueId,
      width: input.width,
      height: input.height,
      ...declaredSizeOf(stored),
    };
  }

  document(input: FakeFileInput & { fileName?: string; mimeType?: string }): Document {
    const extension = /\.([A-Za-z0-9]{1,8})$/.exec(input.fileName ?? '')?.[1] ?? 'bin';
    const stored = this.add(input, 'documents', extension);
    return {
      file_id: stored.fileId,
      file_unique_id: stored.fileUniqueId,
      ...(input.fileName === undefined ? {} : { file_name: input.fileName }),
      ...(input.mimeType === undefined ? {} : { mime_type: input.mimeType }),
      ...declaredSizeOf(stored),
    };
  }

  /** getFile (https://core.telegram.org/bots/api#getfile). */
  getFile(params: Record<string, unknown>): File {
    const stored = typeof params.file_id === 'string' ? this.byId.get(params.file_id) : undefined;
    if (!stored) throw new ApiFailure(400, FILE_ERRORS.invalidFileId);
    const mode = stored.input.getFile ?? (stored.bytes.byteLength > MAX_DOWNLOAD_BYTES ? 'too-big' : 'answer');
    if (mode === 'too-big') throw new ApiFailure(400, FILE_ERRORS.tooBig);
    return {
      file_id: stored.fileId,
      file_unique_id: stored.fileUniqueId,
      file_size: stored.input.resolvedSize ?? stored.bytes.byteLength,
      ...(mode === 'no-path' ? {} : { file_path: stored.filePath }),
    };
  }

  /** `GET /file/bot<token>/<file_path>`: the bytes, or 404 for an unknown path. */
  serve(filePath: string, res: ServerResponse): void {
    const stored = this.byPath.get(filePath);
    const serve = stored?.input.serve ?? 'bytes';
    const status = !stored ? 404 : serve === 500 ? 500 : 200;
    this.downloads.push({ filePath, status, at: Date.now() });
    if (!stored || status !== 200) {
      const description = status === 404 ? 'Not Found' : 'Internal Server Error';
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: false, error_code: status, description }));
      return;
    }
    const headers: Record<string, string | number> = { 'content-type': 'application/octet-stream' };
    if (serve !== 'chunked') headers['content-length'] = stored.bytes.byteLength;
    res.writeHead(200, headers);
    const body = Buffer.from(stored.bytes.buffer, stored.bytes.byteOffset, stored.bytes.byteLength);
    if (serve === 'stall') res.write(body.subarray(0, Math.floor(body.length / 2)));
    else res.end(body);
  }

  /**
   * The file of an upload parameter: a multipart part (sent directly or as `attach://<part>`), or
   * a `file_id` the fake knows. Records nothing.
   *
   * @throws ApiFailure as Telegram answers a missing, unknown, empty or oversized file.
   */
  takeUpload(params: Record<string, unknown>, field: 'photo' | 'document'): { fileName: string; bytes: Buffer } {
    let value = params[field];
    if (typeof value === 'string' && value.startsWith('attach://')) value = params[value.slice('attach://'.length)];
    if (value === undefined) throw new ApiFailure(400, `Bad Request: there is no ${field} in the request`);
    let upload: { fileName: string; bytes: Buffer };
    if (isUploadedPart(value)) {
      upload = { fileName: value.filename, bytes: value.bytes };
    } else {
      const stored = typeof value === 'string' ? this.byId.get(value) : undefined;
      if (!stored) throw new ApiFailure(400, FILE_ERRORS.wrongFile);
      upload = { fileName: stored.filePath.split('/').at(-1) ?? '', bytes: Buffer.from(stored.bytes) };
    }
    if (upload.bytes.byteLength === 0) throw new ApiFailure(400, FILE_ERRORS.empty);
    if (upload.bytes.byteLength > MAX_UPLOAD_BYTES) throw new ApiFailure(413, FILE_ERRORS.entityTooLarge);
    if (field === 'photo' && upload.bytes.byteLength > MAX_PHOTO_BYTES) throw new ApiFailure(400, FILE_ERRORS.photoInvalid);
    return upload;
  }
}

function isUploadedPart(value: unknown): value is UploadedPart {
  return typeof value === 'object' && value !== null && Buffer.isBuffer((value as UploadedPart).bytes);
}
