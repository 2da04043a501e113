import type { Chat, Document, Message, MessageEntity, PhotoSize, User } from 'grammy/types';
import { displayOf, type MessageDisplay } from './display.js';
import { type FormattedText, formattedTextOf } from './parse-mode.js';

/** An error the fake answers with, in the Bot API's own words. */
export class ApiFailure extends Error {
  constructor(
    readonly errorCode: number,
    readonly description: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(description);
    this.name = 'ApiFailure';
  }
}

export type ChatType = 'private' | 'group' | 'supergroup';

/** Bot API 400 descriptions, verbatim (https://core.telegram.org/bots/api, telebot `errors.go`). */
export const BAD_REQUEST = {
  chatNotFound: 'Bad Request: chat not found',
  textEmpty: 'Bad Request: message text is empty',
  tooLong: 'Bad Request: message is too long',
  captionTooLong: 'Bad Request: message caption is too long',
  notModified:
    'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
  editNotFound: 'Bad Request: message to edit not found',
  cantEdit: "Bad Request: message can't be edited",
  replyNotFound: 'Bad Request: message to be replied not found',
  deleteNotFound: 'Bad Request: message to delete not found',
} as const;

/** sendMessage / editMessageText: "1-4096 characters after entities parsing" (UTF-16 units). */
export const MAX_TEXT_CHARS = 4096;
/** sendPhoto / sendDocument: "0-1024 characters after entities parsing". */
export const MAX_CAPTION_CHARS = 1024;

/** What a message carries besides text: a photo (its sizes) or a document. */
export type MessageMedia = { photo: PhotoSize[] } | { document: Document };

interface StoredMessage {
  messageId: number;
  media: MessageMedia | undefined;
  from: User;
  isFromBot: boolean;
  /** Every text the message has shown (after entity parsing), oldest first; the last is current. */
  history: FormattedText[];
  isCaption: boolean;
  editedAt: number[];
  sentAt: number;
  replyTo: number | undefined;
  isDeleted: boolean;
}

interface StoredChat {
  chat: Chat;
  nextMessageId: number;
  messages: Map<number, StoredMessage>;
}

/** One message as the people in the chat see it. */
export interface ChatMessageView {
  messageId: number;
  from: 'bot' | 'user';
  userId: number;
  /** Current text (or caption), as Telegram stores it: after entity parsing. */
  text: string;
  /** The current text's entities. */
  entities: MessageEntity[];
  /** The current text as a person sees it, and its links (see `displayOf`). */
  display: MessageDisplay;
  /** The photo or document the message carries. */
  attachment?: { kind: 'photo' | 'document'; fileName?: string; size?: number };
  /** The message this one replies to. */
  replyTo?: number;
  /** Texts in order: the original, then each edit. */
  history: string[];
  /** When each edit arrived, ms since the epoch (same order as `history.slice(1)`). */
  editedAt: number[];
  sentAt: number;
  isDeleted: boolean;
}

function attachmentOf(media: MessageMedia): NonNullable<ChatMessageView['attachment']> {
  if ('document' in media) {
    const { file_name: fileName, file_size: size } = media.document;
    return { kind: 'document', ...(fileName === undefined ? {} : { fileName }), ...(size === undefined ? {} : { size }) };
  }
  const size = media.photo.at(-1)?.file_size;
  return { kind: 'photo', ...(size === undefined ? {} : { size }) };
}

/** A send's or edit's `text` with its `parse_mode` or `entities`, checked as Telegram does: the limit counts the parsed text. */
function validateText(params: Record<string, unknown>): FormattedText {
  const raw = params.text;
  if (typeof raw !== 'string' || raw.trim().length === 0) throw new ApiFailure(400, BAD_REQUEST.textEmpty);
  const formatted = formattedTextOf(raw, params.parse_mode, params.entities);
  if (formatted.text.trim().length === 0) throw new ApiFailure(400, BAD_REQUEST.textEmpty);
  if (formatted.text.length > MAX_TEXT_CHARS) throw new ApiFailure(400, BAD_REQUEST.tooLong);
  return formatted;
}

function validateCaption(params: Record<string, unknown>): FormattedText {
  if (typeof params.caption !== 'string') return { text: '', entities: [] };
  const formatted = formattedTextOf(params.caption, params.parse_mode, params.caption_entities);
  if (formatted.text.length > MAX_CAPTION_CHARS) throw new ApiFailure(400, BAD_REQUEST.captionTooLong);
  return formatted;
}

function isSameContent(a: FormattedText | undefined, b: FormattedText): boolean {
  return a !== undefined && a.text === b.text && JSON.stringify(a.entities) === JSON.stringify(b.entities);
}

/** The chats the fake knows, with what each participant sees. */
export class ChatStore {
  private readonly chats = new Map<number, StoredChat>();

  constructor(private readonly bot: User) {}

  ensureChat(chatId: number, type: ChatType): StoredChat {
    let stored = this.chats.get(chatId);
    if (!stored) {
      const chat: Chat =
        type === 'private'
          ? { id: chatId, type: 'private', first_name: `User ${chatId}` }
          : { id: chatId, type, title: `Group ${chatId}` };
      stored = { chat, nextMessageId: 1, messages: new Map() };
      this.chats.set(chatId, stored);
    }
    return stored;
  }

  addUserMessage(input: {
    chatId: number;
    chatType: ChatType;
    from: User;
    text: string;
    /** What Telegram's server found in the text, and the formatting the sender's app applied. */
    entities: MessageEntity[];
    isCaption: boolean;
    media?: MessageMedia;
    replyToMessageId?: number;
    at: number;
  }): Message {
    const chat = this.ensureChat(input.chatId, input.chatType);
    const stored = this.add(chat, { from: input.from, isFromBot: false, text: { text: input.text, entities: input.entities }, at: input.at });
    stored.isCaption = input.isCaption;
    stored.media = input.media;
    stored.replyTo = input.replyToMessageId;
    return this.toMessage(chat, stored);
  }

  sendBotMessage(params: Record<string, unknown>, at: number): Message {
    const chat = this.chat(params.chat_id);
    const text = validateText(params);
    const replyTo = this.replyTarget(chat, params);
    const stored = this.add(chat, { from: this.bot, isFromBot: true, text, at });
    stored.replyTo = replyTo;
    return this.toMessage(chat, stored);
  }

  /** sendPhoto / sendDocument after the upload was accepted; `caption` is optional. */
  sendBotMedia(params: Record<string, unknown>, media: MessageMedia, at: number): Message {
    const chat = this.chat(params.chat_id);
    const replyTo = this.replyTarget(chat, params);
    const caption = validateCaption(params);
    const stored = this.add(chat, { from: this.bot, isFromBot: true, text: caption, at });
    stored.isCaption = true;
    stored.media = media;
    stored.replyTo = replyTo;
    return this.toMessage(chat, stored);
  }

  /** The message a send replies to, from `reply_parameters` or the legacy `reply_to_message_id`. */
  private replyTarget(chat: StoredChat, params: Record<string, unknown>): number | undefined {
    const reply = params.reply_parameters as { message_id?: unknown; allow_sending_without_reply?: unknown } | undefined;
    const replyId = reply?.message_id ?? params.reply_to_message_id;
    if (replyId === undefined) return undefined;
    const target = chat.messages.get(Number(replyId));
    if (target && !target.isDeleted) return target.messageId;
    if (reply?.allow_sending_without_reply !== true) throw new ApiFailure(400, BAD_REQUEST.replyNotFound);
    return undefined;
  }

  editBotMessage(params: Record<string, unknown>, at: number): Message {
    const chat = this.chat(params.chat_id);
    const text = validateText(params);
    const stored = chat.messages.get(Number(params.message_id));
    if (!stored || stored.isDeleted) throw new ApiFailure(400, BAD_REQUEST.editNotFound);
    if (!stored.isFromBot) throw new ApiFailure(400, BAD_REQUEST.cantEdit);
    // Telegram compares what the message would hold, text and entities, not the markup sent.
    if (isSameContent(stored.history.at(-1), text)) throw new ApiFailure(400, BAD_REQUEST.notModified);
    stored.history.push(text);
    stored.editedAt.push(at);
    return { ...this.toMessage(chat, stored), edit_date: Math.floor(at / 1000) };
  }

  deleteMessage(params: Record<string, unknown>): true {
    const chat = this.chat(params.chat_id);
    const stored = chat.messages.get(Number(params.message_id));
    if (!stored || stored.isDeleted) throw new ApiFailure(400, BAD_REQUEST.deleteNotFound);
    stored.isDeleted = true;
    return true;
  }

  /** @throws ApiFailure 400 `chat not found` for a chat no user has written in. */
  chat(chatId: unknown): StoredChat {
    const stored = this.chats.get(Number(chatId));
    if (!stored) throw new ApiFailure(400, BAD_REQUEST.chatNotFound);
    return stored;
  }

  view(chatId: number): ChatMessageView[] {
    const stored = this.chats.get(chatId);
    if (!stored) return [];
    return [...stored.messages.values()].map((m) => {
      const current = m.history.at(-1) ?? { text: '', entities: [] };
      return {
        messageId: m.messageId,
        from: m.isFromBot ? 'bot' : 'user',
        userId: m.from.id,
        text: current.text,
        entities: current.entities,
        display: displayOf(current),
        ...(m.media === undefined ? {} : { attachment: attachmentOf(m.media) }),
        ...(m.replyTo === undefined ? {} : { replyTo: m.replyTo }),
        history: m.history.map((version) => version.text),
        editedAt: [...m.editedAt],
        sentAt: m.sentAt,
        isDeleted: m.isDeleted,
      };
    });
  }

  private add(chat: StoredChat, input: { from: User; isFromBot: boolean; text: FormattedText; at: number }): StoredMessage {
    const stored: StoredMessage = {
      messageId: chat.nextMessageId++,
      from: input.from,
      isFromBot: input.isFromBot,
      history: [input.text],
      isCaption: false,
      media: undefined,
      editedAt: [],
      sentAt: input.at,
      replyTo: undefined,
      isDeleted: false,
    };
    chat.messages.set(stored.messageId, stored);
    return stored;
  }

  private toMessage(chat: StoredChat, stored: StoredMessage, depth = 0): Message {
    const { text, entities } = stored.history.at(-1) ?? { text: '', entities: [] };
    const base = {
      message_id: stored.messageId,
      date: Math.floor(stored.sentAt / 1000),
      chat: chat.chat,
      from: stored.from,
    };
    // Telegram leaves `caption` out when there is none.
    const content = stored.isCaption
      ? { ...(text === '' ? {} : { caption: text }), ...(entities.length === 0 ? {} : { caption_entities: entities }), ...stored.media }
      : { text, ...(entities.length === 0 ? {} : { entities }) };
    const target = stored.replyTo === undefined ? undefined : chat.messages.get(stored.replyTo);
    // Telegram nests one level of reply_to_message.
    const reply = target && depth === 0 ? { reply_to_message: this.toMessage(chat, target, 1) } : {};
    return { ...base, ...content, ...reply } as Message;
  }
}
