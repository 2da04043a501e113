import { type BaseMessage, HumanMessage, type MessageContent, ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { UploadedFileInfo } from '../prompt.js';
import { SandboxError } from '../sandbox/paths.js';
import { type EncodedImage, IMAGE_LIMITS } from './encode.js';

/** The tool that shows the agent a picture from its workspace. */
export const VIEW_IMAGE = 'view_image';

/** Reads and encodes the picture at a virtual path of the run's thread (`createImageReader`). */
export type ImageReader = (config: RunnableConfig, virtualPath: string) => Promise<EncodedImage>;

/** What `view_image` leaves on its tool message, for the request that shows the picture. */
export interface ViewedImage {
  path: string;
}

/** Encoded pictures, once per message: a turn's model calls (a tool loop) reuse them. */
const shownMessages = new WeakMap<BaseMessage, Promise<BaseMessage>>();

/**
 * `messages` as a model that sees pictures gets them: the pictures the person sent with the
 * message being answered become image parts of that message, and each picture `view_image`
 * opened in this turn follows the tool results it belongs to, as a hidden message. Older turns'
 * pictures are not sent again (the prompt named them; `view_image` opens them anew), which keeps
 * every request to at most {@link IMAGE_LIMITS}.maxPerRequest pictures. A picture that cannot be
 * read becomes a sentence saying so.
 */
export async function withImagesShown(messages: readonly BaseMessage[], read: ImageReader, config: RunnableConfig): Promise<BaseMessage[]> {
  const turnStart = currentTurnStart(messages);
  if (turnStart === -1) return [...messages];
  let budget = IMAGE_LIMITS.maxPerRequest;
  const shown: BaseMessage[] = messages.slice(0, turnStart);
  const person = messages[turnStart] as BaseMessage;
  const uploads = imageUploads(person).slice(0, budget);
  budget -= uploads.length;
  shown.push(uploads.length === 0 ? person : await cached(person, () => withUploads(person, uploads, read, config)));
  for (let i = turnStart + 1; i < messages.length; i++) {
    const message = messages[i] as BaseMessage;
    shown.push(message);
    // Pictures go after the whole run of tool results: nothing may stand between a call and its results.
    if (!(message instanceof ToolMessage) || messages[i + 1] instanceof ToolMessage) continue;
    for (let j = i; j > turnStart && messages[j] instanceof ToolMessage; j--) {
      const result = messages[j] as ToolMessage;
      const viewed = viewedImage(result);
      if (viewed === undefined || budget === 0) continue;
      budget--;
      shown.push(await cached(result, () => pictureMessage(viewed.path, read, config)));
    }
  }
  return shown;
}

/** How many pictures {@link withImagesShown} adds to the turn being answered, for the token estimate. */
export function imagesShownCount(messages: readonly BaseMessage[]): number {
  const turnStart = currentTurnStart(messages);
  if (turnStart === -1) return 0;
  let count = imageUploads(messages[turnStart] as BaseMessage).length;
  for (let i = turnStart + 1; i < messages.length; i++) if (viewedImage(messages[i] as BaseMessage)) count++;
  return Math.min(count, IMAGE_LIMITS.maxPerRequest);
}

function currentTurnStart(messages: readonly BaseMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as BaseMessage;
    if (message.getType() === 'human' && message.additional_kwargs?.hide_from_ui !== true) return i;
  }
  return -1;
}

function imageUploads(message: BaseMessage): UploadedFileInfo[] {
  const files = message.additional_kwargs?.files;
  return Array.isArray(files) ? (files as UploadedFileInfo[]).filter((file) => file.is_image === true) : [];
}

function viewedImage(message: BaseMessage): ViewedImage | undefined {
  if (!(message instanceof ToolMessage) || message.name !== VIEW_IMAGE) return undefined;
  const artifact = message.artifact as Partial<ViewedImage> | undefined;
  return typeof artifact?.path === 'string' ? { path: artifact.path } : undefined;
}

function cached(message: BaseMessage, build: () => Promise<BaseMessage>): Promise<BaseMessage> {
  let shown = shownMessages.get(message);
  if (shown === undefined) {
    shown = build();
    shownMessages.set(message, shown);
  }
  return shown;
}

async function withUploads(person: BaseMessage, uploads: UploadedFileInfo[], read: ImageReader, config: RunnableConfig): Promise<BaseMessage> {
  const parts: Exclude<MessageContent, string> = typeof person.content === 'string' ? [{ type: 'text', text: person.content }] : [...person.content];
  for (const upload of uploads) parts.push(...(await pictureParts(upload.path, read, config)));
  return new HumanMessage({ content: parts, additional_kwargs: person.additional_kwargs, ...(person.id === undefined ? {} : { id: person.id }) });
}

async function pictureMessage(path: string, read: ImageReader, config: RunnableConfig): Promise<BaseMessage> {
  return new HumanMessage({
    content: [{ type: 'text', text: `The picture ${path}, which you opened with ${VIEW_IMAGE}:` }, ...(await pictureParts(path, read, config))],
    additional_kwargs: { hide_from_ui: true },
  });
}

async function pictureParts(path: string, read: ImageReader, config: RunnableConfig): Promise<Exclude<MessageContent, string>> {
  try {
    const image = await read(config, path);
    return [image.part];
  } catch (error) {
    // Sandbox errors are written for the model (no host paths); anything else is not shown to it.
    const reason = error instanceof SandboxError ? error.message : `${path} could not be read`;
    return [{ type: 'text', text: `(The picture cannot be shown: ${reason}.)` }];
  }
}
