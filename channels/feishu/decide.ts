import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import { type AdmissionRules, type IngressDecision, NOT_ALLOWED } from '../../src/channel/ingress/decision.js';
import type { InboundFile } from '../../src/channel/types.js';
import { encodeFileRef } from './files.js';
import { parseContent, stripLeadingMentions } from './parse.js';
import { sourcePreview } from './render.js';
import type { FeishuMessageEvent } from './schemas.js';

export interface DecideContext extends AdmissionRules {
  /** The bot's open_id, once `start()` learned it: its own messages and mentions. */
  botOpenId: string | undefined;
}

/**
 * What one `im.message.receive_v1` event asks of core (reference §6.4, §5.3), pure: people only;
 * text/post/image/file, non-empty; `/connect <code>` before `allowed_users`; p2p chats are one
 * conversation, group messages start one per root message (replies in a topic, including replies
 * to the bot's cards, carry the root's id and continue it; `GroupTopics` refines this with what
 * it remembers). Leading mentions are stripped to classify commands. A message inside a topic
 * carries a short preview of itself for the answer card, which shows what it answers. Deduplicated
 * by event id: the SDK's dispatcher does not.
 */
export function decideMessage(event: FeishuMessageEvent, context: DecideContext): IngressDecision {
  const message = event.message;
  const userId = event.sender?.sender_id?.open_id;
  if (event.sender?.sender_type !== 'user') return { kind: 'ignore', reason: 'not a person' };
  if (message?.message_id === undefined || message.chat_id === undefined || userId === undefined) return { kind: 'ignore', reason: 'incomplete event' };
  if (context.botOpenId !== undefined && userId === context.botOpenId) return { kind: 'ignore', reason: 'own message' };
  const mentions = message.mentions ?? [];
  const parsed = parseContent(message.message_type ?? '', message.content ?? '', mentions, context.botOpenId);
  if (parsed === undefined) return { kind: 'ignore', reason: 'unsupported message type' };
  const text = parsed.text;
  if (text.trim() === '') return { kind: 'ignore', reason: 'empty message' };
  const deliveryKey = `event:${event.event_id ?? message.message_id}`;
  const isPrivateChat = message.chat_type === 'p2p';
  const bare = stripLeadingMentions(text, mentions);
  const code = context.canBind ? parseConnectCommand(bare) : undefined;
  if (code !== undefined) {
    return {
      kind: 'bind',
      deliveryKey,
      request: { identity: { externalAccountId: userId, workspaceId: message.chat_id }, code, metadata: { chat_id: message.chat_id, message_id: message.message_id } },
      answerTo: { chatId: message.chat_id, isPrivateChat, replyTo: { messageId: message.message_id } },
    };
  }
  if (context.allowedUsers.size > 0 && !context.allowedUsers.has(userId)) return { kind: 'ignore', reason: NOT_ALLOWED };
  const isInTopic = Boolean(message.root_id || message.parent_id || message.thread_id);
  const preview = isPrivateChat || !isInTopic ? '' : sourcePreview(text);
  const topicId = isPrivateChat ? undefined : message.root_id || message.thread_id || message.message_id;
  const messageId = message.message_id;
  const files: InboundFile[] = parsed.files.map((file) => ({
    name: file.name,
    mimeType: file.type === 'image' ? 'image/png' : 'application/octet-stream',
    isImage: file.type === 'image',
    ref: encodeFileRef({ messageId, key: file.key, type: file.type }),
  }));
  return {
    kind: 'forward',
    deliveryKey,
    message: {
      channel: 'feishu',
      chatId: message.chat_id,
      ...(topicId === undefined ? {} : { topicId }),
      userId,
      senderIsAllowlisted: context.allowedUsers.has(userId),
      workspaceId: message.chat_id,
      messageId,
      text,
      kind: classifyText(bare, context.commandNames),
      isPrivateChat,
      ...(files.length > 0 ? { files } : {}),
      platformData: {
        ...(message.root_id ? { rootId: message.root_id } : {}),
        ...(message.parent_id ? { parentId: message.parent_id } : {}),
        ...(message.thread_id ? { threadId: message.thread_id } : {}),
        ...(preview === '' ? {} : { sourcePreview: preview }),
      },
    },
  };
}
