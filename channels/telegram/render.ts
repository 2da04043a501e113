import { type MarkdownDialect, renderMarkdown } from '../../src/channel/markdown.js';
import { markdownParts } from '../../src/channel/markdown-parts.js';
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
 * `markdown` in parts that each render, on their own, within `maxChars` (UTF-16 units of the text
 * Telegram shows once it parsed the entities: the Markdown cannot be cut by its own length), in
 * order (`markdownParts`: at block boundaries, code blocks and tables cut with their fence or
 * header again).
 */
export function splitTelegramMarkdown(markdown: string, maxChars: number = TELEGRAM_LIMITS.maxMessageChars): string[] {
  return markdownParts(markdown, maxChars, (part) => render(part).plainText.length);
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
