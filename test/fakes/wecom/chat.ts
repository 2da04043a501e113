/** What people see in the fake WeCom: bot messages per chat (kept in a `ChatLog`). */
import type { ChatLogMessage } from '../chat-log.js';

export type BotMessageKind = 'stream' | 'markdown' | 'image' | 'file';

export interface FakeBotMessage extends ChatLogMessage {
  /** Streams: the stream id; others `bot-<n>`. */
  id: string;
  /** The userid of a single chat, the chatid of a group (the adapter's chat ids). */
  chatId: string;
  kind: BotMessageKind;
  /** Streams: the member's message the stream answers (its `msgid`). */
  replyTo?: string;
  /** Streams: `finish` was sent. Others: true. */
  isFinished: boolean;
  /** Images and files: the media sent and its upload's name. */
  mediaId?: string;
  fileName?: string;
}
