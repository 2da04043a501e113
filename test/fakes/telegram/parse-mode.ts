import type { MessageEntity } from 'grammy/types';
import { ApiFailure } from './chats.js';

/**
 * How the Bot API turns a `text` (or `caption`) with `parse_mode` or `entities` into what the
 * message holds: plain text plus entities, offsets in UTF-16 code units
 * (https://core.telegram.org/bots/api#formatting-options). Written from the published rules,
 * not from the adapter's renderer, so it referees it: markup Telegram would refuse is refused with
 * the Bot API's `400 Bad Request: can't parse entities: …` (wording as tdlib's HTML parser gives
 * it; byte offsets in UTF-8).
 */

export interface FormattedText {
  text: string;
  entities: MessageEntity[];
}

const CANT_PARSE = "Bad Request: can't parse entities: ";

function cantParse(reason: string): ApiFailure {
  return new ApiFailure(400, `${CANT_PARSE}${reason}`);
}

/** The text and entities a send or edit asks for, as Telegram stores them. */
export function formattedTextOf(text: string, parseMode: unknown, entities: unknown): FormattedText {
  if (parseMode === undefined || parseMode === '') return { text, entities: entitiesWithin(text, entities) };
  if (parseMode === 'HTML') return parseHtml(text);
  if (parseMode === 'MarkdownV2') return parseMarkdownV2(text);
  throw new ApiFailure(400, `Bad Request: unsupported parse_mode "${String(parseMode)}"`);
}

/** `entities` given explicitly: those that fall inside the text are kept, the rest ignored. */
function entitiesWithin(text: string, entities: unknown): MessageEntity[] {
  if (!Array.isArray(entities)) return [];
  return entities.filter(
    (e): e is MessageEntity =>
      typeof e === 'object' &&
      e !== null &&
      typeof e.type === 'string' &&
      Number.isInteger(e.offset) &&
      Number.isInteger(e.length) &&
      e.offset >= 0 &&
      e.length > 0 &&
      e.offset + e.length <= text.length,
  );
}

// ---------------------------------------------------------------------------------------------
// HTML (https://core.telegram.org/bots/api#html-style)

/** Tags Telegram supports, and the entity each one makes. */
const HTML_TAGS: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  span: 'spoiler',
  'tg-spoiler': 'spoiler',
  a: 'text_link',
  code: 'code',
  pre: 'pre',
  blockquote: 'blockquote',
  'tg-emoji': 'custom_emoji',
};

/** "Only the tags mentioned above are currently supported"; named entities: only these four. */
const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
const ENTITY = /^&(?:#x([0-9a-fA-F]{1,6})|#([0-9]{1,7})|(lt|gt|amp|quot));/;

interface OpenTag {
  name: string;
  attributes: Map<string, string>;
  /** Where its content starts in the plain text. */
  start: number;
  /** A `<code class="language-…">` directly inside gives the `pre` its language. */
  language?: string;
}

/** `&…;` at `i`, decoded, with its length; `undefined` when it is no entity Telegram knows (the `&` stays as typed). */
function decodeEntityAt(html: string, i: number): { char: string; length: number } | undefined {
  const match = ENTITY.exec(html.slice(i, i + 12));
  if (!match) return undefined;
  const [whole, hex, decimal, named] = match;
  if (named !== undefined) return { char: NAMED_ENTITIES[named] ?? '', length: whole.length };
  const code = Number.parseInt(hex ?? decimal ?? '', hex === undefined ? 10 : 16);
  if (code <= 0 || code > 0x10ffff) return undefined;
  return { char: String.fromCodePoint(code), length: whole.length };
}

function decodeEntities(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; ) {
    const decoded = value[i] === '&' ? decodeEntityAt(value, i) : undefined;
    out += decoded?.char ?? value[i];
    i += decoded?.length ?? 1;
  }
  return out;
}

function byteOffset(html: string, i: number): number {
  return Buffer.byteLength(html.slice(0, i), 'utf8');
}

const TAG_NAME = /[A-Za-z0-9-]/;
const SPACE = /[ \t\r\n]/;

/**
 * Parses Telegram's HTML: supported tags become entities, the four named and all numeric
 * entities are decoded, a `&` that starts no entity stays literal, and every `<` must open or
 * close a supported tag.
 *
 * @throws ApiFailure 400 `can't parse entities: …` for unsupported, unclosed or mismatched tags.
 */
export function parseHtml(html: string): FormattedText {
  let text = '';
  const entities: MessageEntity[] = [];
  const open: OpenTag[] = [];
  let i = 0;
  while (i < html.length) {
    const char = html[i] as string;
    if (char === '&') {
      const decoded = decodeEntityAt(html, i);
      text += decoded?.char ?? '&';
      i += decoded?.length ?? 1;
      continue;
    }
    if (char !== '<') {
      text += char;
      i += 1;
      continue;
    }
    const tagStart = i;
    if (html[i + 1] === '/') {
      i += 2;
      let name = '';
      while (i < html.length && TAG_NAME.test(html[i] as string)) name += html[i++];
      while (i < html.length && SPACE.test(html[i] as string)) i++;
      if (html[i] !== '>') throw cantParse(`Unclosed end tag at byte offset ${byteOffset(html, tagStart)}`);
      i += 1;
      const tag = open.pop();
      if (tag === undefined) throw cantParse(`Unexpected end tag at byte offset ${byteOffset(html, tagStart)}`);
      if (tag.name !== name.toLowerCase()) {
        throw cantParse(`Unmatched end tag at byte offset ${byteOffset(html, tagStart)}, expected "</${tag.name}>", found "</${name}>"`);
      }
      closeTag(tag, text, open, entities);
      continue;
    }
    i += 1;
    let name = '';
    while (i < html.length && TAG_NAME.test(html[i] as string)) name += html[i++];
    name = name.toLowerCase();
    if (i >= html.length) throw cantParse(`Unclosed start tag at byte offset ${byteOffset(html, tagStart)}`);
    if (HTML_TAGS[name] === undefined) throw cantParse(`Unsupported start tag "${name}" at byte offset ${byteOffset(html, tagStart)}`);
    const parsed = readAttributes(html, i, name, tagStart);
    i = parsed.end;
    if (name === 'span' && parsed.attributes.get('class') !== 'tg-spoiler') {
      throw cantParse(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(html, tagStart)}`);
    }
    open.push({ name, attributes: parsed.attributes, start: text.length });
  }
  const unclosed = open.at(-1);
  if (unclosed) throw cantParse(`Can't find end tag corresponding to start tag ${unclosed.name}`);
  return { text, entities: entities.sort((a, b) => a.offset - b.offset || b.length - a.length) };
}

/** The attributes of a start tag from `i` (just after its name) to its `>`. */
function readAttributes(html: string, from: number, tag: string, tagStart: number): { attributes: Map<string, string>; end: number } {
  const attributes = new Map<string, string>();
  let i = from;
  for (;;) {
    while (i < html.length && SPACE.test(html[i] as string)) i++;
    if (i >= html.length) throw cantParse(`Unclosed start tag at byte offset ${byteOffset(html, tagStart)}`);
    if (html[i] === '>') return { attributes, end: i + 1 };
    let attribute = '';
    while (i < html.length && TAG_NAME.test(html[i] as string)) attribute += html[i++];
    if (attribute === '') throw cantParse(`Empty attribute name in the tag "${tag}" at byte offset ${byteOffset(html, tagStart)}`);
    while (i < html.length && SPACE.test(html[i] as string)) i++;
    if (html[i] !== '=') {
      // A bare attribute: `<blockquote expandable>`.
      attributes.set(attribute.toLowerCase(), '');
      continue;
    }
    i += 1;
    while (i < html.length && SPACE.test(html[i] as string)) i++;
    const quote = html[i];
    let value = '';
    if (quote === '"' || quote === "'") {
      const close = html.indexOf(quote, i + 1);
      if (close === -1) throw cantParse(`Unclosed start tag at byte offset ${byteOffset(html, tagStart)}`);
      value = html.slice(i + 1, close);
      i = close + 1;
    } else {
      while (i < html.length && !SPACE.test(html[i] as string) && html[i] !== '>') value += html[i++];
    }
    attributes.set(attribute.toLowerCase(), decodeEntities(value));
  }
}

function closeTag(tag: OpenTag, text: string, open: OpenTag[], entities: MessageEntity[]): void {
  const offset = tag.start;
  const length = text.length - offset;
  const parent = open.at(-1);
  const language = /^language-(.+)$/.exec(tag.attributes.get('class') ?? '')?.[1];
  // "Use nested pre and code tags, to define programming language for pre entity."
  if (tag.name === 'code' && parent?.name === 'pre' && language !== undefined) {
    parent.language = language;
    return;
  }
  if (length === 0) return;
  const type = HTML_TAGS[tag.name];
  if (type === 'text_link') {
    const href = tag.attributes.get('href') ?? '';
    entities.push({ type: 'text_link', offset, length, url: href });
  } else if (type === 'pre') {
    entities.push({ type: 'pre', offset, length, ...(tag.language === undefined ? {} : { language: tag.language }) });
  } else if (type === 'blockquote') {
    entities.push({ type: tag.attributes.has('expandable') ? 'expandable_blockquote' : 'blockquote', offset, length });
  } else if (type === 'custom_emoji') {
    entities.push({ type: 'custom_emoji', offset, length, custom_emoji_id: tag.attributes.get('emoji-id') ?? '' });
  } else if (type !== undefined) {
    entities.push({ type, offset, length } as MessageEntity);
  }
}

// ---------------------------------------------------------------------------------------------
// MarkdownV2 (https://core.telegram.org/bots/api#markdownv2-style)

/** "In all other places characters … must be escaped with the preceding character '\'." */
const MARKDOWN_V2_RESERVED = new Set(['_', '*', '[', ']', '(', ')', '~', '`', '>', '#', '+', '-', '=', '|', '{', '}', '.', '!']);

const MARKERS: readonly { token: string; type: string }[] = [
  { token: '||', type: 'spoiler' },
  { token: '__', type: 'underline' },
  { token: '*', type: 'bold' },
  { token: '_', type: 'italic' },
  { token: '~', type: 'strikethrough' },
];

/**
 * Parses MarkdownV2: `*bold*`, `_italic_`, `__underline__`, `~strike~`, `||spoiler||`,
 * `` `code` ``, ```` ```lang\npre``` ````, `[label](url)` and `>` quotes at line starts; `\` escapes
 * any character, and any of the 18 reserved characters outside markup must be escaped.
 *
 * @throws ApiFailure 400 `can't parse entities: …` for an unescaped reserved character or an
 * entity without its end.
 */
export function parseMarkdownV2(source: string): FormattedText {
  let text = '';
  const entities: MessageEntity[] = [];
  const open: { type: string; token: string; start: number; at: number }[] = [];
  let quoteStart: number | undefined;
  let i = 0;
  const isLineStart = () => i === 0 || source[i - 1] === '\n';
  const endQuote = () => {
    if (quoteStart === undefined) return;
    const end = text.endsWith('\n') ? text.length - 1 : text.length;
    if (end > quoteStart) entities.push({ type: 'blockquote', offset: quoteStart, length: end - quoteStart });
    quoteStart = undefined;
  };
  while (i < source.length) {
    if (isLineStart()) {
      if (source[i] === '>') {
        quoteStart ??= text.length;
        i += 1;
        continue;
      }
      endQuote();
    }
    const char = source[i] as string;
    if (char === '\\') {
      const next = source.codePointAt(i + 1);
      if (next !== undefined && next >= 1 && next <= 126) {
        text += String.fromCodePoint(next);
        i += 2;
        continue;
      }
      throw cantParse(`Character '\\' is reserved and must be escaped with the preceding '\\'`);
    }
    if (source.startsWith('```', i)) {
      const close = findCodeEnd(source, i + 3, '```');
      if (close === -1) throw cantParse(`Can't find end of Pre entity at byte offset ${byteOffset(source, i)}`);
      const body = source.slice(i + 3, close);
      const newline = body.indexOf('\n');
      const language = newline > 0 && !/\s/.test(body.slice(0, newline)) ? body.slice(0, newline) : undefined;
      const content = unescapeCode(language === undefined ? body : body.slice(newline + 1));
      if (content.length > 0) entities.push({ type: 'pre', offset: text.length, length: content.length, ...(language === undefined ? {} : { language }) });
      text += content;
      i = close + 3;
      continue;
    }
    if (char === '`') {
      const close = findCodeEnd(source, i + 1, '`');
      if (close === -1) throw cantParse(`Can't find end of Code entity at byte offset ${byteOffset(source, i)}`);
      const content = unescapeCode(source.slice(i + 1, close));
      if (content.length > 0) entities.push({ type: 'code', offset: text.length, length: content.length });
      text += content;
      i = close + 1;
      continue;
    }
    if (char === '[') {
      open.push({ type: 'text_link', token: '[', start: text.length, at: i });
      i += 1;
      continue;
    }
    if (char === ']' && open.at(-1)?.type === 'text_link') {
      const link = open.pop() as (typeof open)[number];
      if (source[i + 1] !== '(') throw cantParse(`Character ']' is reserved and must be escaped with the preceding '\\'`);
      const close = findCodeEnd(source, i + 2, ')');
      if (close === -1) throw cantParse(`Can't find end of a URL at byte offset ${byteOffset(source, i + 2)}`);
      const url = source.slice(i + 2, close).replace(/\\([\\)])/g, '$1');
      if (text.length > link.start) entities.push({ type: 'text_link', offset: link.start, length: text.length - link.start, url });
      i = close + 1;
      continue;
    }
    const marker = MARKERS.find((m) => source.startsWith(m.token, i));
    if (marker) {
      const top = open.at(-1);
      if (top?.token === marker.token) {
        open.pop();
        if (text.length > top.start) entities.push({ type: marker.type, offset: top.start, length: text.length - top.start } as MessageEntity);
      } else {
        open.push({ type: marker.type, token: marker.token, start: text.length, at: i });
      }
      i += marker.token.length;
      continue;
    }
    if (MARKDOWN_V2_RESERVED.has(char)) throw cantParse(`Character '${char}' is reserved and must be escaped with the preceding '\\'`);
    text += char;
    i += 1;
  }
  endQuote();
  const unclosed = open.at(-1);
  if (unclosed) {
    const name = unclosed.type === 'text_link' ? 'TextUrl' : unclosed.type.charAt(0).toUpperCase() + unclosed.type.slice(1);
    throw cantParse(`Can't find end of ${name} entity at byte offset ${byteOffset(source, unclosed.at)}`);
  }
  return { text, entities: entities.sort((a, b) => a.offset - b.offset || b.length - a.length) };
}

/** The index of the `end` that closes a code span or URL from `from`, skipping `\`-escapes. */
function findCodeEnd(source: string, from: number, end: string): number {
  for (let i = from; i < source.length; i++) {
    if (source[i] === '\\') {
      i += 1;
      continue;
    }
    if (source.startsWith(end, i)) return i;
  }
  return -1;
}

/** "Inside pre and code entities, all '`' and '\' characters must be escaped." */
function unescapeCode(code: string): string {
  return code.replace(/\\([`\\])/g, '$1');
}
