import { readFile } from 'node:fs/promises';
import { fsStep, statOrExplain } from '../sandbox/file-access.js';
import { SandboxError, showPath } from '../sandbox/paths.js';

/**
 * What a picture becomes before it reaches a model, within every major provider's limits:
 * OpenAI scales to 2,048 px and bills 512-px tiles, Anthropic scales anything over 1,568 px on
 * the long side and takes at most 5 MB, Gemini takes 3,072 px. At 1,568 px a JPEG is a few
 * hundred KB, and a model loses nothing it would have kept.
 */
export const IMAGE_LIMITS = {
  /** Longest side sent, in pixels; larger pictures are scaled down, smaller ones kept. */
  maxSide: 1_568,
  /** Largest file read: a phone photo is 2–12 MB; more is not a picture worth decoding. */
  maxFileBytes: 25 * 1024 * 1024,
  /** Decoded pixels at most (50 megapixels): a "decompression bomb" is refused before it fills memory. */
  maxPixels: 50_000_000,
  /** Pictures one request carries; more are listed in the prompt only. */
  maxPerRequest: 8,
} as const;

/** An image content part as OpenAI-compatible chat models take it (a LangChain content block). */
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string };
  [key: string]: unknown;
}

export interface EncodedImage {
  part: ImagePart;
  width: number;
  height: number;
}

/** sharp is loaded on the first picture: a server that never sees one never pays for it. */
let sharpModule: Promise<typeof import('sharp')> | undefined;
function loadSharp(): Promise<typeof import('sharp')> {
  sharpModule ??= import('sharp');
  return sharpModule;
}

/**
 * `bytes` as an image part: turned upright (EXIF orientation), scaled down to
 * {@link IMAGE_LIMITS}.maxSide on its long side, re-encoded as JPEG (PNG when it has
 * transparency), first frame only for animations.
 *
 * @throws SandboxError when the bytes are not a picture sharp can read, or too many pixels.
 */
export async function encodeImage(bytes: Uint8Array, virtualPath: string): Promise<EncodedImage> {
  const { default: sharp } = await loadSharp();
  try {
    const image = sharp(bytes, { limitInputPixels: IMAGE_LIMITS.maxPixels, failOn: 'error' })
      .rotate()
      .resize({ width: IMAGE_LIMITS.maxSide, height: IMAGE_LIMITS.maxSide, fit: 'inside', withoutEnlargement: true });
    const { hasAlpha } = await image.metadata();
    const encoded = hasAlpha ? image.png() : image.jpeg({ quality: 85 });
    const { data, info } = await encoded.toBuffer({ resolveWithObject: true });
    const mime = hasAlpha ? 'image/png' : 'image/jpeg';
    return { part: { type: 'image_url', image_url: { url: `data:${mime};base64,${data.toString('base64')}` } }, width: info.width, height: info.height };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new SandboxError(`${showPath(virtualPath)} is not a picture that can be shown (${reason})`);
  }
}

/** Pictures encoded lately, by file and version: `view_image` checks one, and the next request shows the same. */
const recentlyEncoded = new Map<string, Promise<EncodedImage>>();
const RECENTLY_ENCODED_MAX = 16;

/**
 * The picture at `hostPath` (already resolved inside the sandbox) encoded for a model; the same
 * file unchanged since (same size and modification time) is read and decoded once.
 *
 * @throws SandboxError when it is over {@link IMAGE_LIMITS}.maxFileBytes, a folder, unreadable,
 *   or not a picture (see {@link encodeImage}).
 */
export async function encodeImageFile(hostPath: string, virtualPath: string): Promise<EncodedImage> {
  const info = await statOrExplain(hostPath, virtualPath);
  if (!info.isFile()) throw new SandboxError(`${showPath(virtualPath)} is not a file`);
  if (info.size > IMAGE_LIMITS.maxFileBytes) {
    throw new SandboxError(`${showPath(virtualPath)} is ${info.size} bytes; pictures over ${IMAGE_LIMITS.maxFileBytes} bytes are not shown`);
  }
  const key = `${hostPath}\u0000${info.size}\u0000${info.mtimeMs}`;
  let encoded = recentlyEncoded.get(key);
  if (encoded === undefined) {
    encoded = fsStep(virtualPath, () => readFile(hostPath)).then((bytes) => encodeImage(bytes, virtualPath));
    // A failure is not kept: the next look reads the file again.
    encoded.catch(() => recentlyEncoded.delete(key));
    if (recentlyEncoded.size >= RECENTLY_ENCODED_MAX) recentlyEncoded.delete(recentlyEncoded.keys().next().value as string);
    recentlyEncoded.set(key, encoded);
  }
  return encoded;
}
