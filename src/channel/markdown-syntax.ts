import type { ListItemPosition, MarkdownTable } from './markdown.js';

/**
 * Pieces for the dialects whose platform reads Markdown itself (Discord, Feishu's card markdown,
 * DingTalk, Slack's `markdown_text`): the CommonMark rules for writing code, quotes, list items
 * and link targets so that they read back as written. Each platform's dialect adds its own
 * escaping of prose and its own exceptions. Also {@link literalMarkdown}, for core's own texts.
 */

/** Runs of backticks in `code`, longest first; `atLineStart` counts only those that begin a line (the ones that can close a fence). */
function longestBacktickRun(code: string, atLineStart: boolean): number {
  const runs = code.match(atLineStart ? /^ {0,3}`+/gm : /`+/g) ?? [];
  return Math.max(0, ...runs.map((run) => run.trim().length));
}

/**
 * Inline code in one backtick more than the longest run inside. Padded with a space when it
 * starts or ends with a backtick or a space: CommonMark strips one space from each end of a span
 * that has one at both, so the padding is all that goes.
 */
export function codeSpan(code: string): string {
  const fence = '`'.repeat(longestBacktickRun(code, false) + 1);
  const padding = /^[ `]|[ `]$/.test(code) ? ' ' : '';
  return `${fence}${padding}${code}${padding}${fence}`;
}

/** A code block fenced with more backticks than any line of it starts with (at least three), so no line of the code ends it. */
export function fencedCodeBlock(code: string, language = ''): string {
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(code, true) + 1));
  return `${fence}${language}\n${code}\n${fence}`;
}

/** An info string that is one word a platform may read as a language; anything else is dropped (it would show as the code's first line). */
export function fenceLanguage(language: string | undefined): string {
  return language !== undefined && /^[\w#+.-]{1,32}$/.test(language) ? language : '';
}

/** Every line of written blocks behind `> `. */
export function quoteLines(inner: string): string {
  return inner
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}

/** `- item` or `<n>. item`, nested by `indent` spaces a level (four nest under `- ` and `1. ` alike). */
export function markdownListItem(content: string, item: ListItemPosition, indent = 4): string {
  return `${' '.repeat(indent * item.depth)}${item.ordered ? `${item.number}. ` : '- '}${content}`;
}

/** A link target with the characters that would end it early (space, angle brackets, parentheses) percent-encoded. */
export function linkTarget(url: string): string {
  return url.replace(/[\s<>()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/** A GFM pipe table of the written cells, for platforms that draw tables. */
export function markdownTable(table: MarkdownTable): string {
  const row = (cells: { written: string }[]) => `| ${cells.map((cell) => cell.written).join(' | ')} |`;
  return [row(table.header), `|${table.header.map(() => '---').join('|')}|`, ...table.rows.map(row)].join('\n');
}

/** A thematic break as `***`: after a line of text, `---` would make that line a heading instead. */
export function markdownRule(): string {
  return '***';
}

/**
 * Prose as standard Markdown that reads back as written: every ASCII punctuation character that
 * can be markup anywhere is backslash-escaped (CommonMark lets any be), and `#`, `+`, `-`, `=` or a
 * number's `.`/`)` where a line starts. For the dialects that read CommonMark's escapes (Slack's
 * `markdown_text`, WeCom) and for {@link literalMarkdown}.
 */
export function backslashEscaped(text: string): string {
  return text
    .replace(/[\\`*_~[\]<>&|!]/g, '\\$&')
    .replace(/^([ \t]*)([#+=-])/gm, '$1\\$2')
    .replace(/^([ \t]*\d+)([.)])/gm, '$1\\$2');
}

/** What marked links by itself (GFM autolinks): left as written, since an escape inside would become part of the address. */
const AUTOLINKED = /\b(?:(?:https?|ftp):\/\/|www\.)[^\s<]*/g;

/**
 * `text` as Markdown that shows exactly `text`: what core quotes in its own Markdown texts (a
 * goal, a memory fact, a schedule's task, an agent's name) is somebody's words, not markup, so
 * `snake_case_name` or `**` shows as typed (issue #20). {@link backslashEscaped}, which every
 * Markdown reader takes back out; web addresses stay as written, for the platforms that link them.
 */
export function literalMarkdown(text: string): string {
  let out = '';
  let at = 0;
  for (const address of text.matchAll(AUTOLINKED)) {
    out += backslashEscaped(text.slice(at, address.index)) + address[0];
    at = address.index + address[0].length;
  }
  return out + backslashEscaped(text.slice(at));
}
