import { isProbablyReaderable, Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { UnreadablePageError } from './errors.js';

/** A web page as text for the model. */
export interface ReadablePage {
  /** The page's title, whitespace collapsed; `''` when it has none (and for non-HTML pages). */
  title: string;
  /** The readable text: at most `maxChars` characters. */
  text: string;
  /** True when `text` was cut at `maxChars`, or the page's HTML was too long to read whole. */
  truncated: boolean;
}

export interface ReadablePageInput {
  body: Buffer;
  /** The media type, e.g. `text/html`; parameters (`; charset=…`) are allowed. `''`: unknown, sniffed from the body. */
  contentType: string;
  /** The `Content-Type` charset; absent: the one in `contentType`, then (HTML) a `<meta charset>`, else utf-8. */
  charset?: string;
  /** The page's address: relative links are resolved against it. */
  url: string;
  maxChars: number;
}


/**
 * A fetched page as text a model can read. HTML goes through Readability (the Firefox reader
 * view), which keeps the article and drops navigation, ads and scripts, and is then written as
 * plain text that keeps its structure: blank lines between paragraphs, `#` headings, `- ` list
 * items, `label (url)` links, fenced code blocks. A page that is not an article (a listing, a
 * dashboard) is read whole instead, less scripts, styles, navigation and footers. Text types
 * come back as they are, JSON pretty-printed. Scripts never run (linkedom runs none). Parsing
 * is synchronous: HTML beyond 500 KB (less scripts and styles) is left unread to bound it.
 *
 * @throws UnreadablePageError for a page that is not text (an image, a PDF, a binary); never for
 *   malformed HTML.
 */
export function readablePage(input: ReadablePageInput): ReadablePage {
  const [rawMediaType = '', ...parameters] = input.contentType.split(';');
  const mediaType = rawMediaType.trim().toLowerCase();
  const charset = input.charset ?? charsetParameter(parameters);
  const kind = pageKind(mediaType, input.body);
  if (kind === 'binary') throw new UnreadablePageError(mediaType);
  if (kind === 'html') {
    const { html, isCut } = parseableHtml(decode(input.body, charset ?? metaCharset(input.body)));
    const page = htmlToText(html, input.url);
    const cut = cutText(page.text, input.maxChars);
    return { title: page.title, text: cut.text, truncated: cut.truncated || isCut };
  }
  const text = decode(input.body, charset);
  return { title: '', ...cutText(kind === 'json' ? prettyJson(text) : text, input.maxChars) };
}

type PageKind = 'html' | 'json' | 'text' | 'binary';

/** Text types outside `text/*` that read fine as they are. */
const TEXT_APPLICATION_TYPES = new Set([
  'application/xml',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/x-sh',
  'application/sql',
  'application/graphql',
]);

function pageKind(mediaType: string, body: Buffer): PageKind {
  if (mediaType === 'text/html' || mediaType === 'application/xhtml+xml') return 'html';
  if (mediaType === 'application/json' || mediaType.endsWith('+json') || mediaType === 'application/x-ndjson') return 'json';
  if (mediaType.startsWith('text/') || mediaType.endsWith('+xml') || TEXT_APPLICATION_TYPES.has(mediaType)) return 'text';
  if (mediaType !== '') return 'binary';
  // No type sent: a NUL byte early on means binary, as browsers sniff; else text, HTML when it starts like it.
  const head = body.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return 'binary';
  return /^\s*(?:<!doctype html|<html|<head|<body)/i.test(head.toString('latin1')) ? 'html' : 'text';
}

/** Bytes looked at to sniff a type or find a `<meta charset>`, as browsers do. */
const SNIFF_BYTES = 1024;

function charsetParameter(parameters: readonly string[]): string | undefined {
  for (const parameter of parameters) {
    const value = /^\s*charset\s*=\s*"?([^";\s]+)"?\s*$/i.exec(parameter)?.[1];
    if (value !== undefined) return value;
  }
  return undefined;
}

/** `<meta charset="…">` or `<meta http-equiv="Content-Type" content="…; charset=…">` in the page's first bytes. */
function metaCharset(body: Buffer): string | undefined {
  return /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(body.subarray(0, SNIFF_BYTES).toString('latin1'))?.[1];
}

/** Bytes as text; an unknown or absent charset reads as utf-8, and bytes that do not decode become U+FFFD. */
function decode(body: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON after all (or newline-delimited JSON): the text is still worth reading as it is.
    return text;
  }
}

/**
 * `text` cut to `maxChars` at the last paragraph break, else line break, else space, found within the
 * limit's last 20%, so the model does not get half a sentence when a whole one was close.
 */
function cutText(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  const limit = Math.max(0, Math.floor(maxChars));
  let window = text.slice(0, limit);
  // Never half a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(window)) window = window.slice(0, -1);
  const earliest = Math.floor(limit * 0.8);
  for (const boundary of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(boundary);
    if (at >= earliest && at > 0) return { text: window.slice(0, at).trimEnd(), truncated: true };
  }
  return { text: window, truncated: true };
}

/** What this file reads of linkedom's nodes: its types are not visible without the DOM library. */
interface DomNode {
  readonly nodeType: number;
  readonly textContent: string | null;
  readonly childNodes: ArrayLike<DomNode>;
}
interface DomElement extends DomNode {
  readonly localName: string;
  getAttribute(name: string): string | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  remove(): void;
}
interface DomDocument {
  readonly documentElement: DomElement | null;
  readonly body: DomElement | null;
  querySelector(selector: string): DomElement | null;
}

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;

/**
 * HTML parsed at most, after scripts, styles, inline SVG and comments are taken out: Readability
 * over linkedom takes about a second per 500 KB on a small machine, all of it on the event loop
 * that every chat shares, so a page is cut at a tenth of a second's worth (a 56 KB article takes
 * ~70 ms); that much HTML still holds more text than a model is given.
 */
const MAX_PARSED_HTML_CHARS = 200_000;
/**
 * Scripts, styles, inline SVG and comments, matched in one pass so that whichever starts first
 * wins, as in the HTML tokenizer: a commented-out `<script>` is a comment, a script's `<!--` is script.
 */
const INERT_HTML = /<!--[\s\S]*?-->|<(script|style|svg)(?=[\s/>])[^>]*>[\s\S]*?<\/\1\s*>/gi;

/** The HTML worth parsing: no inert parts, and at most {@link MAX_PARSED_HTML_CHARS}; `isCut` when the rest was dropped. */
function parseableHtml(html: string): { html: string; isCut: boolean } {
  const lean = html.replace(INERT_HTML, ' ');
  return lean.length <= MAX_PARSED_HTML_CHARS ? { html: lean, isCut: false } : { html: lean.slice(0, MAX_PARSED_HTML_CHARS), isCut: true };
}

/** A page without an article is read whole, less these. */
const FALLBACK_REMOVED = 'script, style, noscript, template, svg, canvas, iframe, object, embed, nav, footer, [hidden], [aria-hidden="true"]';
/** Titles longer than this are cut: a title is a label, and a page may stuff anything into it. */
const MAX_TITLE_CHARS = 300;

function htmlToText(html: string, pageUrl: string): { title: string; text: string } {
  try {
    const document = parseDocument(html);
    const pageTitle = collapse(document.querySelector('title')?.textContent ?? '');
    const links = { pageUrl, linkBase: linkBase(document, pageUrl) };
    // Readability takes the document apart as it works: the fallback reads a fresh copy.
    const article = isProbablyReaderable(document) ? parseArticle(document, links) : null;
    const text = article?.text ?? bodyText(parseDocument(html), links);
    return { title: (article?.title || pageTitle).slice(0, MAX_TITLE_CHARS), text };
  } catch {
    // linkedom and Readability are lenient, but a page is a stranger's input: its text without tags beats an error.
    return { title: '', text: collapse(html.replace(/<[^>]*>/g, ' ')) };
  }
}

function parseArticle(document: DomDocument, links: LinkContext): { title: string; text: string } | null {
  const article = new Readability(document).parse();
  if (!article?.content) return null;
  const content = parseDocument(`<!doctype html><html><head></head><body>${article.content}</body></html>`);
  const text = content.body === null ? '' : renderText(content.body, links);
  return text === '' ? null : { title: collapse(article.title ?? ''), text };
}

/** What relative links resolve against: the page's `<base href>` when it has one, as in a browser. */
function linkBase(document: DomDocument, pageUrl: string): string {
  const base = document.querySelector('base[href]')?.getAttribute('href');
  if (base === null || base === undefined) return pageUrl;
  try {
    return new URL(base, pageUrl).href;
  } catch {
    return pageUrl;
  }
}

/** linkedom puts a fragment without `<html>` in place of the document element: such a page gets one. */
function parseDocument(html: string): DomDocument {
  const wrapped = /<html[\s>]/i.test(html) ? html : `<!doctype html><html><head></head><body>${html}</body></html>`;
  return parseHTML(wrapped).document as DomDocument;
}

function bodyText(document: DomDocument, links: LinkContext): string {
  const root = document.body ?? document.documentElement;
  if (root === null) return '';
  for (const element of Array.from(root.querySelectorAll(FALLBACK_REMOVED))) element.remove();
  return renderText(root, links);
}

function renderText(root: DomElement, links: LinkContext): string {
  return renderBlocks(root, { ...links, depth: 0 }).join('\n\n');
}

interface LinkContext {
  /** The page's address: a link to it (`#section`) is no link worth showing. */
  pageUrl: string;
  /** What relative links resolve against. */
  linkBase: string;
}

interface RenderContext extends LinkContext {
  /** Elements above the node being written, bounded by {@link MAX_DEPTH}. */
  depth: number;
}

/** Elements whose content is not text a reader sees. */
const SKIPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'title',
  'meta',
  'link',
  'svg',
  'canvas',
  'iframe',
  'object',
  'embed',
  'img',
  'picture',
  'video',
  'audio',
  'button',
  'input',
  'select',
  'textarea',
]);
/** Elements that start and end a paragraph; anything else is inline. */
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'header',
  'footer',
  'aside',
  'nav',
  'figure',
  'figcaption',
  'dl',
  'dt',
  'dd',
  'address',
  'details',
  'summary',
  'form',
  'fieldset',
  'legend',
  'center',
  'hgroup',
  'caption',
  'li',
  'tr',
  'hr',
  'body',
  'html',
]);
/** Nesting beyond this is read as plain text: a page of endless unclosed tags must not exhaust the stack. */
const MAX_DEPTH = 200;

/** A node's text as blocks (paragraphs, headings, lists, code), which the caller joins. */
function renderBlocks(node: DomNode, context: RenderContext): string[] {
  const writer = new BlockWriter(context);
  writer.walkChildren(node, context.depth);
  return writer.finish();
}

/** The blocks of `node` itself (rather than of its children). */
function renderNode(node: DomNode, context: RenderContext): string[] {
  const writer = new BlockWriter(context);
  writer.walk(node, context.depth);
  return writer.finish();
}

/**
 * Walks a tree once, writing blocks. Inline text (text nodes, `<span>`, `<em>`, links) gathers
 * in `line` across elements, so `a<b> b</b>` keeps its space, until a block element ends it.
 */
class BlockWriter {
  private readonly blocks: string[] = [];
  private line = '';

  constructor(private readonly context: RenderContext) {}

  finish(): string[] {
    this.endLine();
    return this.blocks;
  }

  walkChildren(node: DomNode, depth: number): void {
    for (const child of Array.from(node.childNodes)) this.walk(child, depth);
  }

  walk(node: DomNode, depth: number): void {
    if (node.nodeType === TEXT_NODE) {
      this.line += collapseSpaces(node.textContent ?? '');
      return;
    }
    if (node.nodeType !== ELEMENT_NODE) return;
    const element = node as DomElement;
    const tag = element.localName?.toLowerCase() ?? '';
    if (SKIPPED.has(tag)) return;
    if (depth >= MAX_DEPTH) {
      this.line += ` ${collapseSpaces(element.textContent ?? '')} `;
      return;
    }
    // Parts rendered on their own (a heading, a list) carry the depth on, so the bound holds through them.
    const inner: RenderContext = { ...this.context, depth: depth + 1 };
    const heading = /^h([1-6])$/.exec(tag);
    if (heading !== null) {
      const title = inlineText(element, inner);
      if (title !== '') this.addBlock(`${'#'.repeat(Number(heading[1]))} ${title}`);
    } else if (tag === 'br') {
      this.line += '\n';
    } else if (tag === 'pre') {
      this.addBlock(codeBlock(element));
    } else if (tag === 'code') {
      const code = collapse(element.textContent ?? '');
      this.line += code === '' || code.includes('`') ? code : `\`${code}\``;
    } else if (tag === 'a') {
      this.line += link(element, inner);
    } else if (tag === 'ul' || tag === 'ol' || tag === 'menu') {
      this.addBlock(list(element, tag === 'ol', inner));
    } else if (tag === 'table') {
      this.addBlock(table(element, inner));
    } else if (tag === 'blockquote') {
      const quoted = renderBlocks(element, inner).join('\n\n');
      this.addBlock(quoted.replace(/^/gm, '> ').replace(/^> $/gm, '>'));
    } else if (BLOCKS.has(tag)) {
      this.endLine();
      this.walkChildren(element, depth + 1);
      this.endLine();
    } else {
      // Inline (span, em, strong, custom elements): part of the current line.
      this.walkChildren(element, depth + 1);
    }
  }

  private endLine(): void {
    const paragraph = tidyInline(this.line);
    this.line = '';
    if (paragraph !== '') this.blocks.push(paragraph);
  }

  private addBlock(block: string): void {
    this.endLine();
    if (block.trim() !== '') this.blocks.push(block);
  }
}

/** An element's text on one line (a heading, a link's label, a table cell). */
function inlineText(element: DomElement, context: RenderContext): string {
  return collapse(renderBlocks(element, context).join(' '));
}

function link(anchor: DomElement, context: RenderContext): string {
  const label = inlineText(anchor, context);
  if (label === '') return '';
  const href = anchor.getAttribute('href')?.trim() ?? '';
  let target: URL;
  try {
    target = new URL(href, context.linkBase);
  } catch {
    return label;
  }
  // Only addresses the model could fetch; a link within the same page (a footnote, a table of contents) adds nothing.
  if (href === '' || href.startsWith('#') || (target.protocol !== 'http:' && target.protocol !== 'https:')) return label;
  if (isSamePage(target, context.pageUrl) || sameAddress(label, target.href)) return label;
  return `${label} (${target.href})`;
}

function isSamePage(target: URL, pageUrl: string): boolean {
  try {
    const page = new URL(pageUrl);
    page.hash = '';
    return target.hash !== '' && `${target.origin}${target.pathname}${target.search}` === page.href;
  } catch {
    return false;
  }
}

/** `example.com/docs` and `https://www.example.com/docs/` name the same address. */
function sameAddress(label: string, href: string): boolean {
  const bare = (text: string) =>
    text
      .toLowerCase()
      .replace(/^https?:\/\//, '')
      .replace(/^www\./, '')
      .replace(/\/$/, '');
  return bare(label) === bare(href);
}

/** List items as `- item` (`1. item` when ordered), nested lists indented under their item. */
function list(element: DomElement, isOrdered: boolean, context: RenderContext): string {
  const lines: string[] = [];
  let number = Number.parseInt(element.getAttribute('start') ?? '', 10);
  if (!Number.isFinite(number)) number = 1;
  for (const child of Array.from(element.childNodes)) {
    const isItem = child.nodeType === ELEMENT_NODE && (child as DomElement).localName?.toLowerCase() === 'li';
    // Anything else in a list (a stray nested list, loose text) is read as part of it all the same.
    const blocks = isItem ? renderBlocks(child, context) : renderNode(child, context);
    if (blocks.length === 0) continue;
    const marker = isItem ? (isOrdered ? `${number++}. ` : '- ') : '';
    const indent = ' '.repeat(isItem ? marker.length : 2);
    const item = blocks.join('\n').replace(/\n(?!\n|$)/g, `\n${indent}`);
    lines.push(isItem ? `${marker}${item}` : `${indent}${item}`);
  }
  return lines.join('\n');
}

/**
 * Table rows as lines of cells joined by ` | `. A cell holding paragraphs is layout, not data
 * (old sites build whole pages in tables): its blocks are kept as blocks.
 */
function table(element: DomElement, context: RenderContext): string {
  const out: string[] = [];
  const visit = (node: DomNode) => {
    for (const child of Array.from(node.childNodes)) {
      if (child.nodeType !== ELEMENT_NODE) continue;
      const tag = (child as DomElement).localName?.toLowerCase() ?? '';
      if (tag === 'thead' || tag === 'tbody' || tag === 'tfoot') visit(child);
      else if (tag === 'caption') out.push(inlineText(child as DomElement, context));
      else if (tag === 'tr') out.push(row(child as DomElement));
    }
  };
  const row = (tr: DomElement): string => {
    const cells = Array.from(tr.childNodes)
      .filter((cell) => cell.nodeType === ELEMENT_NODE && /^t[dh]$/i.test((cell as DomElement).localName ?? ''))
      .map((cell) => renderBlocks(cell, context));
    const isLayout = cells.some((blocks) => blocks.length > 1 || blocks.some((block) => block.includes('\n')));
    if (isLayout) return cells.flat().join('\n\n');
    return cells
      .map((blocks) => blocks.join(' '))
      .filter((cell) => cell !== '')
      .join(' | ');
  };
  visit(element);
  return out.filter((line) => line !== '').join('\n');
}

/** A `<pre>` verbatim, fenced so the model sees where code starts and ends. */
function codeBlock(pre: DomElement): string {
  // A newline right after `<pre>` is not content (HTML drops it too); trailing blank lines are padding.
  const code = (pre.textContent ?? '').replace(/^\r?\n/, '').replace(/\s+$/, '');
  if (code === '') return '';
  const longestRun = Math.max(2, ...Array.from(code.matchAll(/`+/g), (match) => match[0].length));
  const fence = '`'.repeat(longestRun + 1);
  return `${fence}\n${code}\n${fence}`;
}

/** Inline text: each line's runs of spaces collapsed, edges trimmed, at most one blank line in a row (`<br><br>`). */
function tidyInline(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/ {2,}/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Whitespace of HTML text (newlines, tabs, no-break spaces) as single spaces; control characters (binary junk) dropped. */
function collapseSpaces(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point.
  return text.replace(/[\u0000-\u0008\u000e-\u001f\u007f]+/g, '').replace(/[\s\u00a0]+/g, ' ');
}

function collapse(text: string): string {
  return collapseSpaces(text).trim();
}

export { UnreadablePageError } from './errors.js';
