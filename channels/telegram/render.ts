import { lexMarkdown, type MarkdownDialect, renderMarkdown } from '../../src/channel/markdown.js';
import { splitText } from '../../src/channel/split.js';
import { TELEGRAM_LIMITS } from './limits.js';

/**
 * The agent's Markdown as Telegram messages, in parse mode HTML
 * (https://core.telegram.org/bots/api#html-style). HTML rather than MarkdownV2: text needs only
 * `&`, `<` and `>` escaped (MarkdownV2 reserves 18 characters, with other rules inside code and
 * link targets), and a message cut while streaming is still well formed because the walker
 * closes every tag it opens. Telegram has no lists or tables: bullets and numbers are written as
 * text, a table as aligned monospace rows in a `<pre>` block.
 */

/** One message ready to send: its HTML, and the same text without markup for when Telegram refuses the HTML. */
export interface TelegramMessageText {
  html: string;
  plainText: string;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(value: string): string {
  return escapeHtml(value).replace(/"/g, '&quot;');
}

/** Links Telegram opens from a `text_link`; anything else (a relative path) is shown as text. */
const LINKABLE_URL = /^(?:https?:\/\/|tg:\/\/|mailto:)/i;
/** A `language-…` class Telegram takes; an info string with anything else is dropped, the code kept. */
const CODE_LANGUAGE = /^[\w#+.-]{1,32}$/;

/** Telegram's HTML: every construct escaped exactly once. */
export const TELEGRAM_HTML_DIALECT: MarkdownDialect = {
  text: escapeHtml,
  strong: (inner) => `<b>${inner}</b>`,
  emphasis: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  inlineCode: (code) => `<code>${escapeHtml(code)}</code>`,
  link: (written, url) => {
    // An empty label would hide the link altogether.
    const label = written === '' ? escapeHtml(url) : written;
    if (LINKABLE_URL.test(url)) return `<a href="${escapeAttribute(url)}">${label}</a>`;
    return label === escapeHtml(url) ? label : `${label} (${escapeHtml(url)})`;
  },
  codeBlock: (code, language) => {
    const body = escapeHtml(code);
    return language !== undefined && CODE_LANGUAGE.test(language) ? `<pre><code class="language-${language}">${body}</code></pre>` : `<pre>${body}</pre>`;
  },
  // "blockquote and expandable_blockquote entities can't be nested": an inner quote's lines get `> ` as text.
  blockquote: (inner) => `<blockquote>${inner.replace(/<blockquote>([\s\S]*?)<\/blockquote>/g, (_, quote: string) => markedAsQuote(quote))}</blockquote>`,
};

function markedAsQuote(written: string): string {
  return written
    .split('\n')
    .map((line) => `${escapeHtml('> ')}${line}`)
    .join('\n');
}

/** What Telegram shows of our own HTML once parsed: tags gone, the four entities we write decoded. */
function plainTextOf(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&(lt|gt|quot|amp);/g, (_, name: string) => ({ lt: '<', gt: '>', quot: '"', amp: '&' })[name] ?? '');
}

function render(markdown: string): TelegramMessageText {
  const html = renderMarkdown(markdown, TELEGRAM_HTML_DIALECT);
  const plainText = plainTextOf(html);
  // Markdown that shows nothing (only a link definition, an empty link) would be refused as an
  // empty message: it shows as written instead.
  if (plainText.trim() === '' && markdown.trim() !== '') return { html: escapeHtml(markdown), plainText: markdown };
  return { html, plainText };
}

/** Whether `markdown` renders within one message: Telegram counts the text after entity parsing. */
function fits(markdown: string, maxChars: number): boolean {
  return render(markdown).plainText.length <= maxChars;
}

/**
 * Cuts `markdown` into parts that each render, on their own, within `maxChars` (UTF-16 units, as
 * Telegram counts them after entity parsing), in order. Parts end at block boundaries where they
 * can; a code block too long for one message is cut between lines, each piece fenced again, so
 * every part shows code as code; a table is cut between rows, each piece with the header; any
 * other block is cut at a line break, else hard (emphasis cut there shows its markers). The parts
 * joined give back `markdown`, apart from the fences and headers added where a block was cut.
 */
export function splitTelegramMarkdown(markdown: string, maxChars: number = TELEGRAM_LIMITS.maxMessageChars): string[] {
  if (fits(markdown, maxChars)) return markdown.trim() === '' ? [] : [markdown];
  const parts: string[] = [];
  let current = '';
  for (const token of lexMarkdown(markdown)) {
    const candidate = current + token.raw;
    if (fits(candidate, maxChars)) {
      current = candidate;
      continue;
    }
    if (current.trim() !== '') parts.push(current);
    current = '';
    const pieces = fits(token.raw, maxChars) ? [token.raw] : splitBlock(token, maxChars);
    parts.push(...pieces.slice(0, -1));
    current = pieces.at(-1) ?? '';
  }
  if (current.trim() !== '') parts.push(current);
  return parts;
}

type BlockToken = ReturnType<typeof lexMarkdown>[number];

function splitBlock(token: BlockToken, maxChars: number): string[] {
  if (token.type === 'code') return splitCodeBlock(token.text as string, (token.lang as string | undefined) ?? '', maxChars);
  if (token.type === 'table') return splitTable(token.raw, maxChars);
  return splitToFit(token.raw, maxChars);
}

/** Lines of code packed into fenced blocks that each fit; a line longer than a message is cut. */
function splitCodeBlock(code: string, language: string, maxChars: number): string[] {
  let longestRun = 0;
  for (const run of code.matchAll(/`+/g)) longestRun = Math.max(longestRun, run[0].length);
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  const fenced = (lines: string[]) => `${fence}${language}\n${lines.join('\n')}\n${fence}\n`;
  const lines = code.split('\n').flatMap((line) => (line.length <= maxChars ? [line] : splitText(line, maxChars)));
  const blocks: string[] = [];
  let current: string[] = [];
  for (const line of lines) {
    if (current.length > 0 && [...current, line].join('\n').length > maxChars) {
      blocks.push(fenced(current));
      current = [];
    }
    current.push(line);
  }
  if (current.length > 0) blocks.push(fenced(current));
  return blocks;
}

/** Rows packed into tables that each fit, every one with the header and its rule. */
function splitTable(raw: string, maxChars: number): string[] {
  const [header = '', rule = '', ...rows] = raw.replace(/\n+$/, '').split('\n');
  const table = (chunk: string[]) => `${[header, rule, ...chunk].join('\n')}\n`;
  const tables: string[] = [];
  let current: string[] = [];
  for (const row of rows) {
    if (current.length > 0 && !fits(table([...current, row]), maxChars)) {
      tables.push(table(current));
      current = [];
    }
    current.push(row);
  }
  if (current.length > 0) tables.push(table(current));
  // A single row too wide for a message: as text, cut to fit.
  return tables.flatMap((part) => (fits(part, maxChars) ? [part] : splitToFit(part, maxChars)));
}

/** `raw` cut at line breaks (else hard) into pieces that each render within `maxChars`. */
function splitToFit(raw: string, maxChars: number): string[] {
  for (let budget = maxChars; ; budget = Math.floor(budget * 0.8)) {
    const pieces = splitText(raw, Math.max(2, budget));
    if (budget <= 2 || pieces.every((piece) => fits(piece, maxChars))) return pieces;
  }
}

/** `markdown` as one message's HTML. The caller keeps it within a message (see {@link splitTelegramMarkdown}). */
export function renderTelegramMessage(markdown: string): TelegramMessageText {
  return render(markdown);
}

/**
 * `markdown` as one message: the whole text when it fits (a final's part always does), else its
 * first part followed by `…` (a long partial). Half-written Markdown (an open `**`, half a
 * fence) renders as far as it goes, never as broken markup.
 */
export function renderWithinOneMessage(markdown: string, maxChars: number = TELEGRAM_LIMITS.maxMessageChars): TelegramMessageText {
  if (fits(markdown, maxChars)) return render(markdown);
  const [first = ''] = splitTelegramMarkdown(markdown, maxChars - 1);
  const rendered = render(first);
  return { html: `${rendered.html}…`, plainText: `${rendered.plainText}…` };
}
