import { readFile } from 'node:fs/promises';
import type { HostedChats } from '../../src/channel/hosted-chats.js';
import type { Topic } from '../../src/channel/topic.js';
import type { ChannelFiles, InboundFile } from '../../src/channel/types.js';
import { ChannelError } from '../../src/errors.js';
import { parseFileRef } from './ids.js';
import { messageJson } from './wire.js';

/**
 * Files of the web chat, both ways, kept in the database (`hosted_files`): whichever process runs
 * the agent reads what the person uploaded, and every page of the conversation can fetch what the
 * agent sent.
 */
export function createWebFiles(options: { chats: HostedChats; topic: Topic; maxFileBytes: number }): ChannelFiles {
  const { chats, topic, maxFileBytes } = options;
  return {
    async download(file: InboundFile): Promise<Uint8Array> {
      const ref = parseFileRef(file.ref);
      const stored = ref && (await chats.file(ref.conversationId, ref.fileId));
      if (!stored) throw new ChannelError('web', 'FILE_UNAVAILABLE', 'uploaded file not found', { userMessage: 'the file is no longer there' });
      return stored.bytes;
    },
    async send(target, file): Promise<void> {
      if (file.size > maxFileBytes) {
        throw new ChannelError('web', 'FILE_TOO_LARGE', 'file over the web chat limit', { userMessage: `over the web chat's ${maxFileBytes}-byte limit` });
      }
      try {
        const ref = await chats.putFile(target.chatId, { name: file.name, mimeType: file.mimeType, bytes: await readFile(file.hostPath) });
        const message = await chats.addMessage(target.chatId, { author: 'agent', text: '', files: [ref], isFinal: true });
        topic.publish(target.chatId, { type: 'message', message: messageJson(message) });
      } catch (error) {
        throw new ChannelError('web', 'CHANNEL_UNAVAILABLE', 'the web chat could not store a file', { cause: error });
      }
    },
  };
}
