/** What people see in the fake DingTalk: bot messages per chat, as the fake's views (kept in a `ChatLog`). */
import type { ChatLogMessage } from '../chat-log.js';

export type BotMessageKind = 'text' | 'markdown' | 'card' | 'image' | 'file';

export interface FakeBotMessage extends ChatLogMessage {
  /** P2P: the user's staff id; group: the conversation id (the adapter's chat ids). */
  chatId: string;
  kind: BotMessageKind;
  /** How it was sent. */
  via: 'session' | 'robot' | 'card';
  /** The user message it answers: known for session webhook replies and cards whose outTrackId names it. */
  replyTo?: string;
  /** Cards: whether the stream was finalized. Others: true. */
  isFinalized: boolean;
  /** Files: the uploaded media and name. */
  mediaId?: string;
  fileName?: string;
}
