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
 * What the person wrote in a `text`, `post`, `image` or `file` message, as plain text the model
 * reads as they meant it (issue #20); `undefined` for other types or content that does not parse.
 * Mentions (`@_user_1` keys, https://open.feishu.cn/document/server-docs/im-v1/message/events/receive)
 * of the bot (`botOpenId`) are removed with one space beside them; others become `@name`. Text
 * messages keep every other character as typed (Feishu sends them as typed). Posts
 * (https://open.feishu.cn/document/server-docs/im-v1/message-content-description/message_content)
 * are flattened: the title, then one line per paragraph; a paragraph's elements run on
 * without separators (a placeholder apart from the words beside it) (`text` and `md` as written, styles dropped; `a` as `label (href)`; `at` as
 * a mention; `code_block` as a fenced block on its own lines; `hr` as `---`). Images and files
 * add `[image]` / `[file]` to the text and a reference to `files`.
 */
export function parseContent(messageType: string, content: string, mentions: readonly FeishuMention[] = [], botOpenId?: string): ParsedContent | undefined {
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
      return { text: resolveMentions(typeof body.text === 'string' ? body.text : '', mentions, botOpenId), files: [] };
    case 'image':
      return typeof body.image_key === 'string' ? { text: '[image]', files: [{ key: body.image_key, type: 'image', name: `feishu_${body.image_key.slice(-12)}.png` }] } : undefined;
    case 'file':
      return typeof body.file_key === 'string'
        ? { text: '[file]', files: [{ key: body.file_key, type: 'file', name: typeof body.file_name === 'string' ? body.file_name : `feishu_${body.file_key.slice(-12)}.bin` }] }
        : undefined;
    case 'post': {
      const post = parsePost(body, mentions);
      return { text: resolveMentions(post.text, mentions, botOpenId).trim(), files: post.files };
    }
    default:
      return undefined;
  }
}

type PostElement = {
  tag?: string;
  text?: string;
  user_id?: string;
  user_name?: string;
  image_key?: string;
  file_key?: string;
  file_name?: string;
  href?: string;
  language?: string;
};

/** A post's text with mentions still as their keys (resolved by the text messages' rule). */
function parsePost(body: Record<string, unknown>, mentions: readonly FeishuMention[]): ParsedContent {
  // Received posts have `{title, content}`; some carry a locale wrapper (`{zh_cn: {title, content}}`).
  const post = (Array.isArray(body.content) ? body : (Object.values(body).find((v) => v && typeof v === 'object' && Array.isArray((v as { content?: unknown }).content)) as Record<string, unknown> | undefined)) ?? {};
  const paragraphs = Array.isArray(post.content) ? (post.content as unknown[]) : [];
  const files: FeishuFileRef[] = [];
  const lines: string[] = [];
  if (typeof post.title === 'string' && post.title.trim() !== '') lines.push(post.title.trim(), '');
  for (const paragraph of paragraphs) {
    if (!Array.isArray(paragraph)) continue;
    const parts = (paragraph as PostElement[]).map((element) => ({ text: postElementText(element, mentions, files), isPlaceholder: element.tag === 'img' || element.tag === 'media' || element.tag === 'file' }));
    lines.push(joinPostElements(parts).replace(/^\n+|\n+$/g, ''));
  }
  return { text: lines.join('\n'), files };
}

/** A paragraph's elements run on, but an `[image]` or `[file]` placeholder stands apart from the words beside it. */
function joinPostElements(parts: { text: string; isPlaceholder: boolean }[]): string {
  let line = '';
  let previousIsPlaceholder = false;
  for (const part of parts) {
    if (part.text === '') continue;
    const needsSpace = (part.isPlaceholder || previousIsPlaceholder) && line !== '' && !/\s$/.test(line) && !/^\s/.test(part.text);
    line += (needsSpace ? ' ' : '') + part.text;
    previousIsPlaceholder = part.isPlaceholder;
  }
  return line;
}

function postElementText(element: PostElement, mentions: readonly FeishuMention[], files: FeishuFileRef[]): string {
  const text = typeof element.text === 'string' ? element.text : '';
  switch (element.tag) {
    case 'text':
    case 'md':
      return text;
    case 'a': {
      const href = typeof element.href === 'string' ? element.href : '';
      if (href === '' || text === '' || text === href) return href || text;
      return `${text} (${href})`;
    }
    case 'at': {
      if (element.user_id === 'all' || element.user_id === '@_all') return '@all';
      const mention = mentions.find((m) => m.key === element.user_id || (m.id?.open_id !== undefined && m.id.open_id === element.user_id));
      // The key, so the bot's own mention is removed by the same rule as in text messages.
      if (mention?.key !== undefined) return mention.key;
      return `@${element.user_name ?? element.user_id ?? ''}`;
    }
    case 'code_block':
      return `\n\`\`\`${(element.language ?? '').toLowerCase()}\n${text.replace(/\n+$/, '')}\n\`\`\`\n`;
    case 'hr':
      return '\n---\n';
    case 'img':
      if (typeof element.image_key !== 'string') return '';
      files.push({ key: element.image_key, type: 'image', name: `feishu_${element.image_key.slice(-12)}.png` });
      return '[image]';
    case 'file':
    case 'media':
      if (typeof element.file_key !== 'string') return '';
      files.push({ key: element.file_key, type: 'file', name: element.file_name ?? `feishu_${element.file_key.slice(-12)}.bin` });
      return '[file]';
    default:
      return text;
  }
}

/**
 * Mention keys in `text` resolved: the bot's (`botOpenId`) removed with the space after it (or,
 * at the end, the space before it), `@_all` as `@all`, others as `@name`. Longest keys first, so
 * `@_user_10` is never read as `@_user_1` and a `0`.
 */
function resolveMentions(text: string, mentions: readonly FeishuMention[], botOpenId: string | undefined): string {
  const keyed = mentions.filter((m): m is FeishuMention & { key: string } => typeof m.key === 'string' && m.key !== '');
  const keys = [...new Set([...keyed.map((m) => m.key), '@_all'])].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(keys.map((key) => key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  let out = '';
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const key = match[0];
    const at = match.index;
    const end = at + key.length;
    const mention = keyed.find((m) => m.key === key);
    const before = text.slice(last, at);
    last = end;
    if (botOpenId === undefined || mention?.id?.open_id !== botOpenId) {
      out += before + (mention?.name ? `@${mention.name}` : key === '@_all' ? '@all' : key);
    } else if (text[end] === ' ') {
      out += before;
      last = end + 1;
    } else {
      out += end === text.length && before.endsWith(' ') ? before.slice(0, -1) : before;
    }
  }
  return out + text.slice(last);
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
