import { readLimited } from '../../src/channel/read-limited.js';
import { readFile, stat } from 'node:fs/promises';
import type { RateGate } from '../../src/channel/rate-gate.js';
import type { ChannelFiles, InboundFile, OutboundFile, ReplyTarget } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { SlackApi } from './api.js';
import { WORKSPACE_KEY } from './budget.js';
import { threadOf } from './egress.js';
import { toChannelError } from './errors.js';
import { SLACK_LIMITS } from './limits.js';

const PLATFORM = 'slack';

/** Why a file did not arrive or was not sent, as users read it. */
export const SLACK_FILE_REASONS = {
  downloadTooLarge: 'exceeds the 50 MB download limit',
  unavailable: 'download unavailable',
  failed: 'download failed',
  uploadTooLarge: 'exceeds the 50 MB upload limit',
  unreadable: 'file could not be read',
} as const;

/** Slack's file host (https://docs.slack.dev/messaging/working-with-files#authenticating). */
const SLACK_FILES_HOST = 'files.slack.com';
const DOWNLOAD_TIMEOUT_MS = 20_000;
const SEND_ATTEMPTS = 5;

function failure(code: 'FILE_TOO_LARGE' | 'FILE_UNAVAILABLE', message: string, userMessage: string): ChannelError {
  return new ChannelError(PLATFORM, code, message, { status: code === 'FILE_TOO_LARGE' ? 413 : 502, userMessage });
}

export interface SlackFilesOptions {
  api: SlackApi;
  botToken: string;
  /** The Web API root: files on its origin are trusted too (a proxy, the tests' fake). */
  apiUrl: string;
  gate: RateGate;
  logger: Logger;
}

/**
 * Files both ways. `download` fetches a `file_share` file's private URL with the bot token, only
 * from files.slack.com or the configured API origin (the token never goes elsewhere), refusing
 * past 50 MB (declared, announced or received) and Slack's HTML sign-in page (what Slack
 * serves when the token lacks `files:read`). `send` uploads with files.uploadV2 into the
 * person's thread, refusing past 50 MB without a call, retrying 429s after Retry-After.
 */
export function createSlackFiles(options: SlackFilesOptions): ChannelFiles {
  const trustedOrigins = new Set([new URL(options.apiUrl).origin, `https://${SLACK_FILES_HOST}`]);
  return {
    async download(file: InboundFile, signal?: AbortSignal): Promise<Uint8Array> {
      if (file.declaredSize !== undefined && file.declaredSize > SLACK_LIMITS.maxDownloadBytes) {
        throw failure('FILE_TOO_LARGE', `Slack file declares ${file.declaredSize} bytes`, SLACK_FILE_REASONS.downloadTooLarge);
      }
      let url: URL;
      try {
        url = new URL(file.ref);
      } catch {
        throw failure('FILE_UNAVAILABLE', 'Slack file reference is not a URL', SLACK_FILE_REASONS.unavailable);
      }
      if (!trustedOrigins.has(url.origin)) {
        throw failure('FILE_UNAVAILABLE', 'Slack file is not on a Slack file host', SLACK_FILE_REASONS.unavailable);
      }
      const timeout = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
      const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
      let response: Response;
      try {
        response = await fetch(url, { headers: { authorization: `Bearer ${options.botToken}` }, signal: combined });
      } catch {
        if (signal?.aborted) throw signal.reason;
        throw failure('FILE_UNAVAILABLE', 'Slack file download failed (network or timeout)', SLACK_FILE_REASONS.failed);
      }
      const isHtml = response.headers.get('content-type')?.startsWith('text/html') === true && !file.mimeType.startsWith('text/html');
      if (!response.ok || isHtml) {
        await response.body?.cancel().catch(() => undefined);
        const why = isHtml ? 'a sign-in page (missing files:read?)' : `HTTP ${response.status}`;
        throw failure('FILE_UNAVAILABLE', `Slack file download answered ${why}`, SLACK_FILE_REASONS.unavailable);
      }
      if (Number(response.headers.get('content-length') ?? 0) > SLACK_LIMITS.maxDownloadBytes) {
        await response.body?.cancel().catch(() => undefined);
        throw failure('FILE_TOO_LARGE', 'Slack file download announced too many bytes', SLACK_FILE_REASONS.downloadTooLarge);
      }
      return readLimited(response, SLACK_LIMITS.maxDownloadBytes, () =>
        failure('FILE_TOO_LARGE', 'Slack file download passed the limit; stopped', SLACK_FILE_REASONS.downloadTooLarge),
      );
    },

    async send(target: ReplyTarget, file: OutboundFile): Promise<void> {
      const size = await sizeOnDisk(file);
      if (size > SLACK_LIMITS.maxUploadBytes) {
        throw failure('FILE_TOO_LARGE', `file of ${size} bytes is over the upload limit`, SLACK_FILE_REASONS.uploadTooLarge);
      }
      const { channel, threadTs } = threadOf(target);
      for (let attempt = 1; ; attempt++) {
        await options.gate.waitUntilOpen(WORKSPACE_KEY);
        try {
          const bytes = await readFile(file.hostPath);
          const upload = { channel_id: channel, file: bytes, filename: file.name.replace(/\p{Cc}/gu, '_'), title: file.name };
          await options.api.client.filesUploadV2(threadTs === undefined ? upload : { ...upload, thread_ts: threadTs });
          return;
        } catch (error) {
          const channelError = toChannelError(error, 'files.uploadV2');
          if (channelError.retryAfterMs === undefined || attempt >= SEND_ATTEMPTS) throw channelError;
          options.gate.block(WORKSPACE_KEY, channelError.retryAfterMs);
          options.logger.warn({ retryAfterMs: channelError.retryAfterMs, attempt }, 'Slack file upload rate limited');
        }
      }
    },
  };
}

async function sizeOnDisk(file: OutboundFile): Promise<number> {
  try {
    const info = await stat(file.hostPath);
    if (!info.isFile()) throw new Error('not a regular file');
    return info.size;
  } catch {
    throw new ChannelError(PLATFORM, 'FILE_UNAVAILABLE', 'outbound file could not be read', { status: 500, userMessage: SLACK_FILE_REASONS.unreadable });
  }
}

