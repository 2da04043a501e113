import type { HostedFileRef } from '../db/schema/hosted-chats.js';

export type { HostedFileRef } from '../db/schema/hosted-chats.js';

/** A conversation of a chat this server hosts itself (the web chat). */
export interface HostedConversation {
  id: string;
  /** The account that may read and write it; undefined on a server without accounts (then anyone may). */
  ownerUserId: string | undefined;
  title: string;
  createdAt: Date;
  updatedAt: Date;
}

/** One message of a hosted conversation: the person's, or the agent's reply (final or still coming). */
export interface HostedMessage {
  id: number;
  conversationId: string;
  author: 'person' | 'agent';
  text: string;
  files: HostedFileRef[];
  /** False while the reply is being written: the row holds its acknowledgement until the final. */
  isFinal: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The conversations, messages and files of one platform that the server hosts (`ChannelDeps.hostedChats`),
 * in the database: every process of a deployment sees them, and a reload shows what was said.
 * Conversations and messages of other platforms are out of its reach.
 */
export interface HostedChats {
  createConversation(input: { ownerUserId: string | undefined; title: string }): Promise<HostedConversation>;
  conversation(id: string): Promise<HostedConversation | undefined>;
  /** The owner's conversations, the most recent first; `undefined` lists those without an owner. */
  conversations(ownerUserId: string | undefined, limit: number): Promise<HostedConversation[]>;
  /** Deletes the conversation with its messages and files; resolves false when there was none. */
  deleteConversation(id: string): Promise<boolean>;
  /** Appends a message and marks the conversation active. */
  addMessage(conversationId: string, message: { author: HostedMessage['author']; text: string; files?: HostedFileRef[]; isFinal: boolean }): Promise<HostedMessage>;
  /** Replaces a message's text (the final of a reply); resolves with it, or undefined when it is gone. */
  replaceMessage(id: number, update: { text: string; isFinal: boolean }): Promise<HostedMessage | undefined>;
  /** Deletes messages of the conversation (an acknowledgement nobody will answer, with the message it acknowledged). */
  deleteMessages(conversationId: string, ids: readonly number[]): Promise<void>;
  /** The conversation's messages after `afterId` (all when absent), oldest first, at most `limit`. */
  messages(conversationId: string, options: { afterId?: number; limit: number }): Promise<HostedMessage[]>;
  /** Keeps a file of the conversation; resolves with how messages refer to it. */
  putFile(conversationId: string, file: { name: string; mimeType: string; bytes: Uint8Array }): Promise<HostedFileRef>;
  /** Which of `ids` are files of that conversation, without their bytes, in the order asked. */
  fileRefs(conversationId: string, ids: readonly string[]): Promise<HostedFileRef[]>;
  /** A file of that conversation, with its bytes; undefined when it is not one of its files. */
  file(conversationId: string, id: string): Promise<(HostedFileRef & { bytes: Uint8Array }) | undefined>;
}
