import type { HostedConversation, HostedMessage } from '../../src/channel/hosted-chats.js';
import type { z } from 'zod';
import type { conversationSchema, messageSchema } from './schemas.js';

export type MessageJson = z.infer<typeof messageSchema>;
export type ConversationJson = z.infer<typeof conversationSchema>;

/** The topic the web chat's live events go through, one key per conversation. */
export const REPLIES_TOPIC = 'replies';

/** A message as the page reads it (`GET …/messages`, and `message` events). */
export function messageJson(message: HostedMessage): MessageJson {
  return {
    id: message.id,
    author: message.author,
    text: message.text,
    files: message.files.map((file) => ({ id: file.id, name: file.name, mime_type: file.mimeType, size: file.size })),
    is_final: message.isFinal,
    created_at: message.createdAt.toISOString(),
    updated_at: message.updatedAt.toISOString(),
  };
}

export function conversationJson(conversation: HostedConversation): ConversationJson {
  return {
    id: conversation.id,
    title: conversation.title,
    created_at: conversation.createdAt.toISOString(),
    updated_at: conversation.updatedAt.toISOString(),
  };
}

/**
 * What a conversation's open pages are sent live: a message that is new or changed (the final
 * replacing an acknowledgement), or the text of a reply so far (not stored: a page that missed it
 * shows the next one, or the final).
 */
export type LiveEvent = { type: 'message'; message: MessageJson } | { type: 'partial'; message_id: number; text: string };
