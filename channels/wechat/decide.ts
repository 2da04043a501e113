import { classifyText } from '../../src/channel/commands.js';
import { parseConnectCommand } from '../../src/channel/connect.js';
import { type AdmissionRules, type IngressDecision, NOT_ALLOWED } from '../../src/channel/ingress/decision.js';
import type { InboundFile } from '../../src/channel/types.js';
import { inboundFileOf } from './inbound-files.js';
import { ITEM_TYPE, MESSAGE_TYPE, type WeChatMessage } from './schemas.js';

/** WeChat decides by the admission rules alone. */
export type DecideContext = AdmissionRules;

/** `platformData` key of the message's `context_token`: every reply must echo it. */
export const CONTEXT_TOKEN = 'contextToken';

/**
 * What one `getupdates` message asks of core (reference §6.6), pure. Only people's messages
 * (`message_type` 1); text items joined by newlines (a voice note counts by its transcript);
 * images and files become `InboundFile`s. `/connect <code>` binds before the allow-list. One
 * conversation per person: the chat is the sender (reference §3.3), deduplicated by `message_id`.
 */
export function decideWeChatMessage(message: WeChatMessage, context: DecideContext): IngressDecision {
  if (message.message_type !== MESSAGE_TYPE.user) return { kind: 'ignore', reason: 'not a person (bot echo or system message)' };
  const messageId = message.message_id ?? message.client_id;
  if (messageId === undefined) return { kind: 'ignore', reason: 'message without an id' };
  const userId = message.from_user_id;
  const text = textOf(message);
  const files = message.item_list.map((item, index) => inboundFileOf(item, messageId, index)).filter((f): f is InboundFile => f !== undefined);
  const platformData = message.context_token === undefined ? undefined : { [CONTEXT_TOKEN]: message.context_token };
  const deliveryKey = `${userId}:${messageId}`;
  const answerTo = { chatId: userId, isPrivateChat: true, replyTo: { messageId }, ...(platformData ? { platformData } : {}) };
  const code = context.canBind ? parseConnectCommand(text) : undefined;
  if (code !== undefined) {
    return { kind: 'bind', deliveryKey, request: { identity: { externalAccountId: userId, workspaceId: userId }, code }, answerTo };
  }
  const isAllowListed = context.allowedUsers.size > 0;
  if (isAllowListed && !context.allowedUsers.has(userId)) return { kind: 'ignore', reason: NOT_ALLOWED };
  if (text.trim() === '' && files.length === 0) return { kind: 'ignore', reason: 'nothing to read (sticker, video, empty)' };
  return {
    kind: 'forward',
    deliveryKey,
    message: {
      channel: 'wechat',
      chatId: userId,
      userId,
      senderIsAllowlisted: isAllowListed,
      // Reference §1.5: WeChat dedupes per chat.
      workspaceId: userId,
      messageId,
      text,
      kind: classifyText(text, context.commandNames),
      isPrivateChat: true,
      ...(files.length === 0 ? {} : { files }),
      ...(platformData ? { platformData } : {}),
    },
  };
}

/** Text items, and voice transcripts, joined by newlines. */
function textOf(message: WeChatMessage): string {
  const parts: string[] = [];
  for (const item of message.item_list) {
    if (item.type === ITEM_TYPE.text && item.text_item?.text) parts.push(item.text_item.text);
    else if (item.type === ITEM_TYPE.voice && item.voice_item?.text) parts.push(item.voice_item.text);
  }
  return parts.join('\n');
}
