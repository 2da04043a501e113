/** A fake Telegram Bot API for tests: point grammY's `client.apiRoot` at `apiRoot`. */

export type { ChatMessageView, ChatType } from './chats.js';
export { BAD_REQUEST, MAX_CAPTION_CHARS, MAX_TEXT_CHARS } from './chats.js';
export type { MessageDisplay } from './display.js';
export type { FormattedText } from './parse-mode.js';
export type { DownloadRecord, FakeFileInput, UploadRecord } from './files.js';
export { FILE_ERRORS, MAX_DOWNLOAD_BYTES, MAX_PHOTO_BYTES, MAX_UPLOAD_BYTES } from './files.js';
export type {
  FakeDocumentInput,
  FakePhotoSizeInput,
  FakeTelegramOptions,
  Fault,
  RateLimitViolation,
  RecordedCall,
  UserMessageInput,
} from './server.js';
export { FakeTelegram } from './server.js';
