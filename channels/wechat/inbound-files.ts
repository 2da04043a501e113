import type { InboundFile } from '../../src/channel/types.js';
import { type CdnMedia, ITEM_TYPE, type WeChatMessageItem } from './schemas.js';

/** What `InboundFile.ref` holds for WeChat: where the encrypted bytes are and the key (opaque to core, never logged). */
export interface WeChatFileRef {
  kind: 'image' | 'file';
  media: CdnMedia;
  /** `image_item.aeskey`: the raw key as hex, preferred over `media.aes_key` for images. */
  hexKey?: string;
}

/** The ref of a file, as `InboundFile.ref` carries it. */
export function encodeFileRef(ref: WeChatFileRef): string {
  return JSON.stringify(ref);
}

/** An image or file item → an `InboundFile`, or `undefined` for other items and media without a location. Pure. */
export function inboundFileOf(item: WeChatMessageItem, messageId: string, index: number): InboundFile | undefined {
  if (item.type === ITEM_TYPE.image) {
    const image = item.image_item;
    if (!image?.media || !hasLocation(image.media)) return undefined;
    return {
      name: `wechat-image-${messageId}-${index}.jpg`,
      // The CDN serves bytes without a type; the decrypted image is sniffed by core when it matters.
      mimeType: 'image/jpeg',
      isImage: true,
      ...(image.mid_size === undefined ? {} : { declaredSize: image.mid_size }),
      ref: encodeFileRef({ kind: 'image', media: image.media, ...(image.aeskey ? { hexKey: image.aeskey } : {}) }),
    };
  }
  if (item.type === ITEM_TYPE.file) {
    const file = item.file_item;
    if (!file?.media || !hasLocation(file.media) || !file.media.aes_key) return undefined;
    const name = file.file_name?.trim() || `wechat-file-${messageId}-${index}.bin`;
    const declared = Number(file.len);
    return {
      name,
      mimeType: mimeTypeOf(name),
      isImage: false,
      ...(Number.isFinite(declared) && declared > 0 ? { declaredSize: declared } : {}),
      ref: encodeFileRef({ kind: 'file', media: file.media }),
    };
  }
  return undefined;
}

function hasLocation(media: CdnMedia): boolean {
  return Boolean(media.full_url || media.encrypt_query_param);
}

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', json: 'application/json', pdf: 'application/pdf',
  html: 'text/html', xml: 'application/xml', yaml: 'application/yaml', yml: 'application/yaml', zip: 'application/zip',
  doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint', pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp',
};

/** The lowercased extension of a file name, without the dot; '' when it has none. */
export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

/** A MIME type from the name's extension; `application/octet-stream` when unknown. */
export function mimeTypeOf(name: string): string {
  return MIME_BY_EXTENSION[extensionOf(name)] ?? 'application/octet-stream';
}
