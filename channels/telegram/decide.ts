import type { Message, User } from 'grammy/types';
import { classifyText } from '../../src/channel/commands.js';
import { type AdmissionRules, type IngressDecision, NOT_ALLOWED } from '../../src/channel/ingress/decision.js';
import type { ChatBindRequest } from '../../src/channel/types.js';
import { normalizeCommand, parseStartCommand } from './commands.js';
import { isPrivateChatType, topicIdFor } from './ids.js';
import { telegramInboundFiles } from './inbound-files.js';
import { readableText } from './inbound-text.js';

/** Everything this adapter says to users by itself (reference §5.3, §6.2). */
export const TELEGRAM_REPLIES = {
  working: 'Working on it...',
  welcome: 'Welcome to DeerFlow! Send me a message to start a conversation.\nType /help for available commands.',
} as const;

/** `canBind`: `/start <code>` binds the sender (reference §5.3). */
export interface DecideContext extends AdmissionRules<number> {
  botUsername: string;
}

/**
 * What a Telegram message asks of core (pure). Text is `text`, else `caption`, else `''`, as the
 * model should read it (see `readableText`: a leading @bot mention removed, labelled links and
 * mentions written out); a photo
 * or document becomes `files` (see `telegramInboundFiles`), so a file without a caption is still
 * chat. Ignores bots (ourselves included), messages with neither text nor files, commands
 * addressed to another bot, and senders outside `allowedUsers`; `/start <code>` binds, answered
 * in reply; a bare `/start` is answered with the welcome; the rest is forwarded as chat or
 * command. No delivery key: Telegram's polling hands a message over once, and the turn journal
 * recognises one fetched again after a crash.
 */
export function decideMessage(message: Message, context: DecideContext): IngressDecision {
  const from = message.from;
  if (from === undefined) return { kind: 'ignore', reason: 'no-sender' };
  if (from.is_bot) return { kind: 'ignore', reason: 'bot-sender' };
  const raw =
    message.text !== undefined
      ? readableText(message.text, message.entities, context.botUsername)
      : readableText(message.caption ?? '', message.caption_entities, context.botUsername);
  const files = telegramInboundFiles(message);
  if (raw.length === 0 && files.length === 0) return { kind: 'ignore', reason: 'empty' };
  const text = normalizeCommand(raw, context.botUsername);
  if (text === undefined) return { kind: 'ignore', reason: 'other-bot' };
  const chatId = String(message.chat.id);
  const isPrivateChat = isPrivateChatType(message.chat.type);
  // Before the allow-list (reference §8.1 step 5): someone not yet listed can still bind.
  // The deep link sends exactly `/start <code>`; words typed after the code are ignored, as for /connect.
  const code = parseStartCommand(text)?.split(/\s+/)[0];
  if (code && context.canBind) {
    return { kind: 'bind', request: bindRequestOf(message, from, code), answerTo: { chatId, isPrivateChat, replyTo: { messageId: String(message.message_id) } } };
  }
  const isAllowed = context.allowedUsers.size === 0 || context.allowedUsers.has(from.id);
  if (!isAllowed) return { kind: 'ignore', reason: NOT_ALLOWED };
  if (parseStartCommand(text) !== undefined) return { kind: 'answer', text: TELEGRAM_REPLIES.welcome, answerTo: { chatId, isPrivateChat, replyTo: {} } };
  return {
    kind: 'forward',
    message: {
      channel: 'telegram',
      chatId,
      topicId: topicIdFor({
        chatType: message.chat.type,
        messageId: message.message_id,
        replyToMessageId: message.reply_to_message?.message_id,
      }),
      userId: String(from.id),
      senderIsAllowlisted: context.allowedUsers.size > 0,
      // Reference §1.5: Telegram dedupes within the chat.
      workspaceId: chatId,
      messageId: String(message.message_id),
      text,
      kind: classifyText(text, context.commandNames),
      isPrivateChat,
      ...(files.length === 0 ? {} : { files }),
    },
  };
}

/** Reference §8.1: Telegram binds per user per chat; the name is the full name, else the username. */
function bindRequestOf(message: Message, from: User, code: string): ChatBindRequest {
  const fullName = [from.first_name, from.last_name].filter(Boolean).join(' ');
  return {
    identity: { externalAccountId: String(from.id), workspaceId: String(message.chat.id) },
    code,
    accountName: fullName || from.username || String(from.id),
    ...('title' in message.chat && message.chat.title ? { workspaceName: message.chat.title } : {}),
    metadata: { chat_id: message.chat.id, chat_type: message.chat.type, telegram_username: from.username ?? null },
  };
}
