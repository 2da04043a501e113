/** A fake Telegram Bot API for tests: point grammY's `client.apiRoot` at `apiRoot`. */
export { FakeTelegram } from './server.js';
export type { Fault, FakeTelegramOptions, RateLimitViolation, RecordedCall, UserMessageInput } from './server.js';
export type { ChatMessageView, ChatType } from './chats.js';
export { BAD_REQUEST, MAX_TEXT_CHARS } from './chats.js';
