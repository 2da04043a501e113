import type { InboundFile } from '../../src/channel/types.js';

/** The robot message callback's `data` (sdk-recipes §5), the fields we read. */
export interface RobotMessage {
  msgId?: string;
  msgtype?: string;
  conversationId?: string;
  conversationType?: string | number;
  senderId?: string;
  senderStaffId?: string;
  senderNick?: string;
  chatbotUserId?: string;
  robotCode?: string;
  sessionWebhook?: string;
  sessionWebhookExpiredTime?: number;
  /** `isReplyMsg` / `repliedMsg`: a quote of another message (sent by DingTalk, not documented). */
  text?: { content?: string; isReplyMsg?: boolean; repliedMsg?: { msgId?: string } };
  content?: {
    richText?: { text?: string; type?: string; downloadCode?: string; pictureDownloadCode?: string }[];
    downloadCode?: string;
    pictureDownloadCode?: string;
    fileName?: string;
  };
}

/** A robot message in our words; `undefined` from {@link parseRobotMessage} means drop it. */
export interface ParsedRobotMessage {
  messageId: string;
  /** P2P: the sender (staff id, else sender id); group: the conversation id (reference §3.3). */
  chatId: string;
  conversationId: string;
  isPrivateChat: boolean;
  /** Staff id when DingTalk gives one, else the sender id (reference §6.5). */
  userId: string;
  userName?: string;
  text: string;
  files: InboundFile[];
  sessionWebhook?: { url: string; expiresAt: number };
  /** The message this one quotes (DingTalk's way to reply). */
  quotedMessageId?: string;
}

/**
 * Normalizes a robot message (reference §6.5): conversation type `"2"` (string or number) is a
 * group, anything else P2P; text from `text` or `richText`; files from `picture`, `richText`
 * pictures and `file` (their `ref` is the download code). Messages with no message id, no
 * sender, no chat, from the bot itself, or with neither text (beyond leading mentions) nor files
 * are dropped. Pure.
 */
export function parseRobotMessage(message: RobotMessage): ParsedRobotMessage | undefined {
  const userId = message.senderStaffId || message.senderId;
  const conversationId = message.conversationId ?? '';
  const isPrivateChat = String(message.conversationType) !== '2';
  const chatId = isPrivateChat ? (userId ?? '') : conversationId;
  if (!message.msgId || !userId || !chatId || !conversationId) return undefined;
  if (message.chatbotUserId !== undefined && message.senderId === message.chatbotUserId) return undefined;
  const { text, files } = contentOf(message);
  // Mentions alone ask nothing (DingTalk removes the robot's own @ but not others').
  if (stripLeadingMentions(text).trim() === '' && files.length === 0) return undefined;
  const parsed: ParsedRobotMessage = { messageId: message.msgId, chatId, conversationId, isPrivateChat, userId, text, files };
  if (message.senderNick) parsed.userName = message.senderNick;
  const quoted = message.text?.isReplyMsg === true ? message.text.repliedMsg?.msgId : undefined;
  if (quoted) parsed.quotedMessageId = quoted;
  if (message.sessionWebhook && typeof message.sessionWebhookExpiredTime === 'number') {
    parsed.sessionWebhook = { url: message.sessionWebhook, expiresAt: message.sessionWebhookExpiredTime };
  }
  return parsed;
}

function contentOf(message: RobotMessage): { text: string; files: InboundFile[] } {
  const content = message.content ?? {};
  switch (message.msgtype) {
    case 'text':
      // As typed, but for leading whitespace (in a group, what is left where DingTalk removed the robot's @).
      return { text: (message.text?.content ?? '').trimStart(), files: [] };
    case 'richText': {
      const parts = content.richText ?? [];
      const texts: string[] = [];
      const files: InboundFile[] = [];
      for (const part of parts) {
        if (typeof part.text === 'string') texts.push(part.text);
        const code = part.downloadCode ?? part.pictureDownloadCode;
        if (part.type === 'picture' && code) files.push(image(`image_${files.length}.png`, code));
      }
      return { text: texts.join('').trim(), files };
    }
    case 'picture': {
      const code = content.downloadCode ?? content.pictureDownloadCode;
      return { text: '', files: code ? [image('image.png', code)] : [] };
    }
    case 'file':
      return content.downloadCode
        ? { text: '', files: [{ name: content.fileName || 'file.bin', mimeType: 'application/octet-stream', isImage: false, ref: content.downloadCode }] }
        : { text: '', files: [] };
    default:
      return { text: '', files: [] };
  }
}

function image(name: string, ref: string): InboundFile {
  return { name, mimeType: 'image/png', isImage: true, ref };
}

/** Leading `@name` mentions, removed for command classification only (reference §1.1). */
export function stripLeadingMentions(text: string): string {
  let rest = text;
  for (let match = /^@\S+\s*/.exec(rest); match; match = /^@\S+\s*/.exec(rest)) rest = rest.slice(match[0].length);
  return rest;
}
