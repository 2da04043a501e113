import { open, readdir, unlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { UploadedFileInfo } from '../prompt.js';
import { isFsError, SandboxError, type SandboxPaths, VIRTUAL_USER_DATA } from './paths.js';

/**
 * Files a person sent, written into the thread's uploads folder (reference §4.9). The same shape
 * the prompt lists under the current turn's uploads (`additional_kwargs.files`).
 */
export type UploadedFile = UploadedFileInfo;

/** One file to save: an untrusted suggested name and its bytes. */
export interface UploadInput {
  name: string;
  bytes: Uint8Array;
  isImage: boolean;
}

/** Most file systems (ext4, APFS, NTFS in UTF-16 units) refuse longer names. */
const MAX_NAME_BYTES = 255;
/** Gives up finding a free `_<n>` name after this many; only a hostile folder gets here. */
const MAX_COLLISION_SUFFIX = 10_000;
const UPLOADS_VIRTUAL_DIR = `${VIRTUAL_USER_DATA}/uploads`;
/**
 * C0/C1 controls, and the bidirectional overrides that make `report‮fdp.exe` display as
 * `reportexe.pdf`.
 */
const UNSAFE_CHARACTER = /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const UNSAFE_CHARACTERS = new RegExp(UNSAFE_CHARACTER.source, 'gu');

function isSafeBaseName(name: string): boolean {
  return (
    name !== '' &&
    name !== '.' &&
    name !== '..' &&
    !name.includes('/') &&
    !name.includes('\\') &&
    !UNSAFE_CHARACTER.test(name) &&
    Buffer.byteLength(name, 'utf8') <= MAX_NAME_BYTES
  );
}

/**
 * A base name safe to create inside one folder: the part after the last `/`, without control or
 * bidi-override characters, trimmed. Returns `fallback` when what is left is empty, `.` or `..`,
 * contains a backslash (a Windows path cannot be split safely here), or is over 255 UTF-8 bytes.
 *
 * @throws RangeError when `fallback` itself is not a safe base name.
 */
export function sanitizeFileName(name: string, fallback: string): string {
  if (!isSafeBaseName(fallback)) throw new RangeError('fallback file name is not a safe base name');
  const base = (name.split('/').at(-1) ?? '').replace(UNSAFE_CHARACTERS, '').trim();
  return isSafeBaseName(base) ? base : fallback;
}

/** `report.pdf` → `report_2.pdf`; the stem is shortened when the result would be over 255 bytes. */
function withSuffix(name: string, suffix: number): string {
  const dot = name.lastIndexOf('.');
  // A leading dot (`.env`) starts a hidden name, not an extension.
  const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  const tail = `_${suffix}${extension}`;
  const stemChars = [...stem];
  while (stemChars.length > 1 && Buffer.byteLength(stemChars.join('') + tail, 'utf8') > MAX_NAME_BYTES) stemChars.pop();
  return stemChars.join('') + tail;
}

function fallbackName(index: number, isImage: boolean): string {
  return `upload-${index + 1}.${isImage ? 'png' : 'bin'}`;
}

/**
 * Creates `name` (or `name_1`, `name_2`… when taken) in the thread's uploads folder with exclusive
 * create, so an existing file or symlink there is never followed or overwritten. Returns the name used.
 */
async function createUnique(paths: SandboxPaths, name: string, bytes: Uint8Array, claimed: Set<string>): Promise<string> {
  const dir = paths.uploadsDir;
  for (let suffix = 0; suffix <= MAX_COLLISION_SUFFIX; suffix++) {
    const candidate = suffix === 0 ? name : withSuffix(name, suffix);
    if (claimed.has(candidate)) continue;
    claimed.add(candidate);
    const hostPath = join(dir, candidate);
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(hostPath, 'wx', 0o644);
    } catch (error) {
      // Appeared since the folder was listed (or is a dangling symlink): try the next name.
      if (isFsError(error, 'EEXIST')) continue;
      throw new SandboxError(`could not save upload '${candidate}'`, { cause: error });
    }
    try {
      await handle.writeFile(bytes);
      await handle.close();
    } catch (error) {
      await handle.close().catch(() => undefined);
      // The file is ours (exclusive create): leave no half-written upload behind.
      await unlink(hostPath).catch(() => undefined);
      throw new SandboxError(`could not save upload '${candidate}'`, { cause: error });
    }
    await paths.adopt(hostPath);
    return candidate;
  }
  throw new SandboxError(`could not save upload '${name}': too many files with that name`);
}

/**
 * Writes `files` into the thread's uploads folder (creating the thread folders first), in order,
 * and returns what the agent is told about each: name, size, `/mnt/user-data/uploads/<name>`,
 * and whether it is an image.
 *
 * Names go through {@link sanitizeFileName} (fallback `upload-<n>.png` for images, `.bin`
 * otherwise, `n` counting from 1 in the batch). A name already in the folder or earlier in the
 * batch gets `_1`, `_2`… before its extension. Files are created exclusively (`wx`): an existing
 * file or symlink at the destination is neither followed nor overwritten.
 *
 * @throws SandboxError when the uploads folder (or a thread folder above it) is a symlink or not a
 *   directory, or a write fails
 *   (files saved before the failure stay). Messages never name host paths.
 */
export async function saveUploads(paths: SandboxPaths, files: readonly UploadInput[]): Promise<UploadedFile[]> {
  // Also refuses an uploads folder (or a folder above it) that is a symlink or not a directory.
  await paths.ensure();
  const claimed = new Set(await readdir(paths.uploadsDir));
  const saved: UploadedFile[] = [];
  for (const [index, file] of files.entries()) {
    const name = sanitizeFileName(file.name, fallbackName(index, file.isImage));
    const filename = await createUnique(paths, name, file.bytes, claimed);
    saved.push({
      filename,
      size: file.bytes.byteLength,
      path: posix.join(UPLOADS_VIRTUAL_DIR, filename),
      is_image: file.isImage,
    });
  }
  return saved;
}
