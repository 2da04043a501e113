import type { InboundFile } from '../../src/channel/types.js';
import type { CallbackBody } from './schemas.js';
import { WECOM_TEXTS } from './texts.js';

/** A member's message in our words; `undefined` from {@link parseCallback} means drop it. */
export interface ParsedMessage {
  messageId: string;
  /** Single chat: the sender's userid; group: the group's chatid (so answers stay in the group). */
  chatId: string;
  isPrivateChat: boolean;
  userId: string;
  /** The bot, WeCom's scope for dedupe and bindings (reference §6.0). */
  botId: string;
  text: string;
  files: InboundFile[];
}

/** The message types the reference handles (§6.7); voice and video are dropped. */
const HANDLED_TYPES = new Set(['text', 'mixed', 'image', 'file']);

/**
 * Normalizes a callback body (reference §6.7), pure: text (with a quote:
 * `<text>\nQuote message: <quote>`), image, file and mixed messages; an image or file alone reads
 * `（receive image ）` / `（receive file）`, a mixed one without text `（receive image/file）`.
 * A file's `ref` is its download link with its key (never logged). Other types, and a group
 * message without a chatid, are dropped.
 */
export function parseCallback(body: CallbackBody): ParsedMessage | undefined {
  if (!HANDLED_TYPES.has(body.msgtype)) return undefined;
  const isPrivateChat = body.chattype === 'single';
  const chatId = isPrivateChat ? body.from.userid : body.chatid;
  if (chatId === undefined) return undefined;
  const { text, files } = contentOf(body);
  if (text.trim() === '' && files.length === 0) return undefined;
  return { messageId: body.msgid, chatId, isPrivateChat, userId: body.from.userid, botId: body.aibotid, text, files };
}

function contentOf(body: CallbackBody): { text: string; files: InboundFile[] } {
  switch (body.msgtype) {
    case 'text':
      return { text: withQuote(body.text?.content ?? '', body), files: [] };
    case 'image':
      return body.image ? { text: WECOM_TEXTS.imageOnly, files: [mediaFile('image', body.image)] } : { text: '', files: [] };
    case 'file':
      return body.file ? { text: WECOM_TEXTS.fileOnly, files: [mediaFile('file', body.file)] } : { text: '', files: [] };
    default: {
      const items = body.mixed?.msg_item ?? [];
      const text = items
        .map((item) => (item.msgtype === 'text' ? (item.text?.content ?? '') : ''))
        .filter((part) => part.trim() !== '')
        .join('\n');
      const files = items.flatMap((item) => (item.msgtype === 'image' && item.image ? [mediaFile('image', item.image)] : []));
      return { text: text === '' ? WECOM_TEXTS.mixedWithoutText : withQuote(text, body), files };
    }
  }
}

function withQuote(text: string, body: CallbackBody): string {
  const quoted = body.quote?.text?.content;
  return quoted ? `${text}${WECOM_TEXTS.quotePrefix}${quoted}` : text;
}

/** What a file download needs, opaque to core. */
export interface MediaRef {
  url: string;
  aeskey?: string;
}

function mediaFile(kind: 'image' | 'file', media: { url: string; aeskey?: string | undefined }): InboundFile {
  const ref: MediaRef = { url: media.url, ...(media.aeskey ? { aeskey: media.aeskey } : {}) };
  // WeCom names neither: the download's Content-Disposition would, but the name is settled here.
  return kind === 'image'
    ? { name: 'image.png', mimeType: 'image/png', isImage: true, ref: JSON.stringify(ref) }
    : { name: 'file.bin', mimeType: 'application/octet-stream', isImage: false, ref: JSON.stringify(ref) };
}

/** Leading `@name` mentions (the bot's, in a group), removed for classifying commands only (reference §1.1). */
export function stripLeadingMentions(text: string): string {
  return text.replace(/^(?:@\S+\s*)+/, '');
}
