import { presentedFiles, resolveOutputFiles } from '../agent/sandbox/artifacts.js';
import type { SandboxPaths } from '../agent/sandbox/paths.js';
import { saveUploads, type UploadedFile, type UploadInput } from '../agent/sandbox/uploads.js';
import type { ChannelFiles, InboundMessage, OutboundFile, ReplyTarget } from '../channel/types.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { MESSAGES } from './messages.js';

/** The parts of a running channel file transfer needs. */
export interface FileChannel {
  displayName?: string;
  files?: ChannelFiles;
}

/** What a message's files became: saved uploads for the agent, and notes for those that failed. */
export interface ReceivedFiles {
  uploads: UploadedFile[];
  /** `[<Platform> attachment unavailable: <name> (<reason>)]`, one per file not received. */
  notes: string[];
}

/**
 * Files between a conversation and its thread's sandbox (reference §4.8, §4.9). Knows no
 * platform: bytes come and go through the adapter's `ChannelFiles`.
 */
export class ConversationFiles {
  constructor(
    /** Absent: no sandbox here (the agent runs on another server), so files are noted as not carried and none are sent. */
    private readonly sandboxPaths: ((userId: string, threadId: string) => SandboxPaths) | undefined,
    private readonly logger: Logger,
  ) {}

  /** Downloads the message's files into the thread's uploads; one that fails becomes a note. Never throws. */
  async receive(input: { message: InboundMessage; channel: FileChannel; userId: string; threadId: string; signal: AbortSignal }): Promise<ReceivedFiles> {
    const { message, channel, threadId } = input;
    const files = message.files ?? [];
    if (files.length === 0) return { uploads: [], notes: [] };
    const platform = channel.displayName ?? message.channel;
    const notes: string[] = [];
    const fetched: UploadInput[] = [];
    for (const file of files) {
      if (!channel.files || !this.sandboxPaths) {
        const reason = channel.files ? MESSAGES.filesNotCarried : MESSAGES.filesNotSupported;
        notes.push(MESSAGES.attachmentUnavailable(platform, file.name, reason));
        continue;
      }
      try {
        fetched.push({ name: file.name, bytes: await channel.files.download(file, input.signal), isImage: file.isImage });
      } catch (error) {
        const reason = error instanceof AppError && error.userMessage ? error.userMessage : 'download failed';
        this.logger.warn({ threadId, err: describeError(error) }, 'inbound file not received');
        notes.push(MESSAGES.attachmentUnavailable(platform, file.name, reason));
      }
    }
    if (fetched.length === 0 || !this.sandboxPaths) return { uploads: [], notes };
    try {
      return { uploads: await saveUploads(this.sandboxPaths(input.userId, threadId), fetched), notes };
    } catch (error) {
      this.logger.error({ threadId, err: describeError(error) }, 'inbound files could not be saved');
      return { uploads: [], notes: [...notes, ...fetched.map((file) => MESSAGES.attachmentUnavailable(platform, file.name, 'could not be saved'))] };
    }
  }

  /**
   * The files the agent presented this turn that are regular files in its outputs, and the
   * name of every presented file (refused ones first) for the `Created File` line. Without a
   * sandbox here (the agent's is on another server) none is sent, and the line still names them.
   */
  async presented(values: unknown, userId: string, threadId: string): Promise<{ files: OutboundFile[]; names: string[] }> {
    const paths = presentedFiles(values);
    if (paths.length === 0) return { files: [], names: [] };
    if (!this.sandboxPaths) return { files: [], names: paths.map(baseName) };
    const { files, unresolved } = await resolveOutputFiles(this.sandboxPaths(userId, threadId), paths);
    if (unresolved.length > 0) this.logger.warn({ threadId, count: unresolved.length }, 'presented files skipped: not regular files under outputs');
    return { files, names: [...unresolved.map(baseName), ...files.map((file) => file.name)] };
  }

  /** Sends files after the final text; one failing file never stops the others. Never throws. */
  async send(channel: FileChannel, target: ReplyTarget, files: readonly OutboundFile[]): Promise<void> {
    if (files.length === 0 || !channel.files) return;
    for (const file of files) {
      await channel.files.send(target, file).catch((error: unknown) => {
        this.logger.warn({ chatId: target.chatId, size: file.size, err: describeError(error) }, 'file not delivered');
      });
    }
  }
}

function baseName(virtualPath: string): string {
  return virtualPath.split('/').at(-1) ?? virtualPath;
}
