/**
 * `im.message.receive_v1` messages → text and file references (reference §6.4). Pure.
 */

export interface FeishuMention {
  key?: string;
  id?: { open_id?: string };
  name?: string;
}

export interface FeishuFileRef {
  key: string;
  type: 'image' | 'file';
  name: string;
}

export interface ParsedContent {
  text: string;
  files: FeishuFileRef[];
}

/**
 * Text of a `text`, `post`, `image` or `file` message; `undefined` for other types or content
 * that does not parse. Mention keys (`@_user_1`) become `@name`. Images and files add `[image]` /
 * `[file]` to the text and a reference to `files`. Post paragraphs are joined by blank lines,
 * their elements by spaces.
 */
export function parseContent(messageType: string, content: string, mentions: readonly FeishuMention[] = []): ParsedContent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const body = parsed as Record<string, unknown>;
  switch (messageType) {
    case 'text':
      return { text: replaceMentions(typeof body.text === 'string' ? body.text : '', mentions).trim(), files: [] };
    case 'image':
      return typeof body.image_key === 'string' ? { text: '[image]', files: [{ key: body.image_key, type: 'image', name: `feishu_${body.image_key.slice(-12)}.png` }] } : undefined;
    case 'file':
      return typeof body.file_key === 'string'
        ? { text: '[file]', files: [{ key: body.file_key, type: 'file', name: typeof body.file_name === 'string' ? body.file_name : `feishu_${body.file_key.slice(-12)}.bin` }] }
        : undefined;
    case 'post':
      return parsePost(body, mentions);
    default:
      return undefined;
  }
}

type PostElement = { tag?: string; text?: string; user_id?: string; user_name?: string; image_key?: string; file_key?: string; file_name?: string; href?: string };

function parsePost(body: Record<string, unknown>, mentions: readonly FeishuMention[]): ParsedContent | undefined {
  // Received posts have `{title, content}`; some carry a locale wrapper (`{zh_cn: {title, content}}`).
  const post = (Array.isArray(body.content) ? body : (Object.values(body).find((v) => v && typeof v === 'object' && Array.isArray((v as { content?: unknown }).content)) as Record<string, unknown> | undefined)) ?? {};
  const paragraphs = Array.isArray(post.content) ? (post.content as unknown[]) : [];
  const files: FeishuFileRef[] = [];
  const lines: string[] = [];
  if (typeof post.title === 'string' && post.title.trim() !== '') lines.push(post.title.trim());
  for (const paragraph of paragraphs) {
    if (!Array.isArray(paragraph)) continue;
    const parts: string[] = [];
    for (const element of paragraph as PostElement[]) {
      if (element.tag === 'text' || element.tag === 'a') {
        if (typeof element.text === 'string') parts.push(element.text);
      } else if (element.tag === 'at') {
        const name = element.user_name ?? mentions.find((m) => m.key === element.user_id)?.name;
        parts.push(`@${name ?? element.user_id ?? ''}`);
      } else if (element.tag === 'img' && typeof element.image_key === 'string') {
        parts.push('[image]');
        files.push({ key: element.image_key, type: 'image', name: `feishu_${element.image_key.slice(-12)}.png` });
      } else if ((element.tag === 'file' || element.tag === 'media') && typeof element.file_key === 'string') {
        parts.push('[file]');
        files.push({ key: element.file_key, type: 'file', name: element.file_name ?? `feishu_${element.file_key.slice(-12)}.bin` });
      }
    }
    const line = replaceMentions(parts.join(' '), mentions).trim();
    if (line !== '') lines.push(line);
  }
  return { text: lines.join('\n\n'), files };
}

function replaceMentions(text: string, mentions: readonly FeishuMention[]): string {
  let result = text;
  for (const mention of mentions) {
    if (mention.key) result = result.split(mention.key).join(`@${mention.name ?? 'user'}`);
  }
  return result;
}

/**
 * Removes leading `@name` tokens (reference §4.8 `strip_leading_mentions`), only when the text has
 * no leading whitespace; used to classify commands and to find `/connect`.
 */
export function stripLeadingMentions(text: string, mentions: readonly FeishuMention[]): string {
  let rest = text;
  for (;;) {
    const mention = mentions.find((m) => m.name !== undefined && rest.startsWith(`@${m.name}`));
    if (mention === undefined) break;
    rest = rest.slice(`@${mention.name}`.length).replace(/^\s+/, '');
  }
  return rest;
}

/** The text handed to the agent: the bot's own leading mention removed, others kept. */
export function stripBotMention(text: string, mentions: readonly FeishuMention[], botOpenId: string | undefined): string {
  const own = mentions.filter((m) => (botOpenId === undefined ? true : m.id?.open_id === botOpenId) && m.name !== undefined);
  let rest = text;
  for (;;) {
    const mention = own.find((m) => rest.startsWith(`@${m.name}`));
    if (mention === undefined) return rest;
    rest = rest.slice(`@${mention.name}`.length).replace(/^\s+/, '');
  }
}
