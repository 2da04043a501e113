import { stat } from 'node:fs/promises';
import { extname, posix } from 'node:path';
import type { OutboundFile } from '../../channel/types.js';
import { type SandboxPaths, VIRTUAL_USER_DATA } from './paths.js';

/**
 * Files the agent presented in the current turn, resolved for delivery (reference §4.8). Input is
 * LangGraph state serialized as message dicts (`{ type: 'ai', tool_calls: [{ name, args }] }`).
 */

type MessageDict = Record<string, unknown>;

const PRESENT_FILES_TOOL = 'present_files';
const OUTPUTS_PREFIX = `${VIRTUAL_USER_DATA}/outputs/`;
/** The CJK enumeration comma DeerFlow joins file names with. */
const NAME_SEPARATOR = '、';
const DEFAULT_MIME_TYPE = 'application/octet-stream';

/** Common extensions only; anything else is sent as `application/octet-stream`. */
const MIME_TYPES: Readonly<Record<string, string>> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.bmp': 'image/bmp',
  '.svg': 'image/svg+xml',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.py': 'text/x-python',
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.tar': 'application/x-tar',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.ppt': 'application/vnd.ms-powerpoint',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.ogg': 'audio/ogg',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
};

function asDict(value: unknown): MessageDict | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as MessageDict) : undefined;
}

/** A message dict's field, also when LangChain serialized it under `kwargs`. */
function field(message: MessageDict, name: string): unknown {
  return message[name] ?? asDict(message.kwargs)?.[name];
}

/**
 * `ai`, `human`, …: from `type`, `kwargs.type`, or the last element of a LangChain `id` path
 * (`type: 'constructor'` marks LangChain's serialized form, where the real type is inside).
 */
function typeOf(message: MessageDict): string {
  for (const type of [message.type, asDict(message.kwargs)?.type]) {
    if (typeof type === 'string' && type !== 'constructor') return type.toLowerCase();
  }
  const id = message.id;
  if (Array.isArray(id) && typeof id.at(-1) === 'string') return (id.at(-1) as string).toLowerCase();
  return '';
}

function isVisibleHuman(message: MessageDict): boolean {
  const type = typeOf(message);
  if (type !== 'human' && type !== 'user' && type !== 'humanmessage') return false;
  return asDict(field(message, 'additional_kwargs'))?.hide_from_ui !== true;
}

function isAssistant(message: MessageDict): boolean {
  const type = typeOf(message);
  return type.startsWith('ai') || type.startsWith('assistant');
}

/** Tool call arguments arrive as an object, or as a JSON string from some providers. */
function argsOf(call: MessageDict): MessageDict | undefined {
  const args = call.args;
  if (typeof args !== 'string') return asDict(args);
  try {
    return asDict(JSON.parse(args));
  } catch {
    return undefined;
  }
}

function presentedIn(message: MessageDict): string[] {
  const calls = field(message, 'tool_calls');
  if (!Array.isArray(calls)) return [];
  const paths: string[] = [];
  for (const call of calls.map(asDict)) {
    if (call?.name !== PRESENT_FILES_TOOL) continue;
    const filepaths = argsOf(call)?.filepaths;
    if (!Array.isArray(filepaths)) continue;
    for (const path of filepaths) if (typeof path === 'string' && path !== '') paths.push(path);
  }
  return paths;
}

/**
 * The `filepaths` of `present_files` tool calls made by assistant messages of the current turn:
 * those after the last human message that is not hidden (`additional_kwargs.hide_from_ui`).
 * Deduplicated, in call order; `[]` when `values` has no message list.
 */
export function presentedFiles(values: unknown): string[] {
  const messages = asDict(values)?.messages;
  if (!Array.isArray(messages)) return [];
  const dicts = messages.map(asDict);
  let turnStart = 0;
  for (let i = dicts.length - 1; i >= 0; i--) {
    const message = dicts[i];
    if (message !== undefined && isVisibleHuman(message)) {
      turnStart = i + 1;
      break;
    }
  }
  const seen = new Set<string>();
  for (const message of dicts.slice(turnStart)) {
    if (message === undefined || !isAssistant(message)) continue;
    for (const path of presentedIn(message)) seen.add(path);
  }
  return [...seen];
}

/** Guessed from the extension (case-insensitive); `application/octet-stream` when unknown. */
export function mimeTypeFor(fileName: string): string {
  return MIME_TYPES[extname(fileName).toLowerCase()] ?? DEFAULT_MIME_TYPE;
}

async function resolveOne(paths: SandboxPaths, virtualPath: string): Promise<OutboundFile | undefined> {
  if (!virtualPath.startsWith(OUTPUTS_PREFIX)) return undefined;
  let hostPath: string;
  try {
    // Refuses `..`, and real locations (symlinks followed) outside the outputs folder.
    const resolved = await paths.resolveVirtual(virtualPath, { write: false });
    if (resolved.area !== 'outputs') return undefined;
    hostPath = resolved.hostPath;
  } catch {
    return undefined;
  }
  const info = await stat(hostPath).catch(() => undefined);
  if (!info?.isFile()) return undefined;
  const name = posix.basename(virtualPath);
  const mimeType = mimeTypeFor(name);
  return { hostPath, name, mimeType, isImage: mimeType.startsWith('image/'), size: info.size };
}

/**
 * Resolves presented virtual paths to files to send. A path is accepted only when it starts with
 * `/mnt/user-data/outputs/`, its real location (symlinks followed) stays inside this thread's
 * outputs folder, and it is a regular file; the rest come back in `unresolved`, as given, in
 * order. Never throws for a bad path.
 */
export async function resolveOutputFiles(
  paths: SandboxPaths,
  virtualPaths: readonly string[],
): Promise<{ files: OutboundFile[]; unresolved: string[] }> {
  const files: OutboundFile[] = [];
  const unresolved: string[] = [];
  for (const virtualPath of virtualPaths) {
    const file = await resolveOne(paths, virtualPath);
    if (file === undefined) unresolved.push(virtualPath);
    else files.push(file);
  }
  return { files, unresolved };
}

/**
 * The line that names created files (reference §4.8): `Created File: 📎 a.pdf` for one,
 * `Created Files: 📎 a.pdf、b.png` for several, `''` for none.
 */
export function createdFilesText(names: readonly string[]): string {
  if (names.length === 0) return '';
  const label = names.length === 1 ? 'Created File' : 'Created Files';
  return `${label}: 📎 ${names.join(NAME_SEPARATOR)}`;
}
