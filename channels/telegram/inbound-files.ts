import type { Message, PhotoSize } from 'grammy/types';
import { sanitizeFileName } from '../../src/agent/sandbox/uploads.js';
import type { InboundFile } from '../../src/channel/types.js';

const DEFAULT_MIME_TYPE = 'application/octet-stream';
/** Telegram re-encodes every photo it stores as JPEG. */
const PHOTO_MIME_TYPE = 'image/jpeg';

/** Whether `size` is the better copy: more pixels, then more bytes. */
function isLarger(size: PhotoSize, than: PhotoSize): boolean {
  const area = size.width * size.height;
  const thanArea = than.width * than.height;
  if (area !== thanArea) return area > thanArea;
  return (size.file_size ?? 0) > (than.file_size ?? 0);
}

/** The largest of the sizes Telegram offers for one photo (it sends several, thumbnails first). */
export function largestPhotoSize(sizes: readonly PhotoSize[]): PhotoSize | undefined {
  let best: PhotoSize | undefined;
  for (const size of sizes) if (best === undefined || isLarger(size, best)) best = size;
  return best;
}

/**
 * The files of a message (reference §6.2): a photo as its largest size, named
 * `telegram-photo-<message_id>.jpg` (`image/jpeg`); a document under its own name (sanitized;
 * else `telegram-document-<message_id>.bin`) and MIME type (else `application/octet-stream`).
 * Other media (voice, video, stickers) are not taken. `ref` is the `file_id`. Pure.
 */
export function telegramInboundFiles(message: Message): InboundFile[] {
  const files: InboundFile[] = [];
  const photo = largestPhotoSize(message.photo ?? []);
  if (photo !== undefined) {
    files.push({
      name: `telegram-photo-${message.message_id}.jpg`,
      mimeType: PHOTO_MIME_TYPE,
      isImage: true,
      ...(photo.file_size === undefined ? {} : { declaredSize: photo.file_size }),
      ref: photo.file_id,
    });
  }
  const document = message.document;
  if (document !== undefined) {
    const mimeType = document.mime_type || DEFAULT_MIME_TYPE;
    files.push({
      name: sanitizeFileName(document.file_name ?? '', `telegram-document-${message.message_id}.bin`),
      mimeType,
      isImage: mimeType.startsWith('image/'),
      ...(document.file_size === undefined ? {} : { declaredSize: document.file_size }),
      ref: document.file_id,
    });
  }
  return files;
}
