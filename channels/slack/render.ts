import type { Token } from 'marked';
import { lexMarkdown, type MarkdownDialect, renderMarkdown } from '../../src/channel/markdown.js';
import { backslashEscaped, codeSpan, fencedCodeBlock, linkTarget, markdownListItem, quoteLines } from '../../src/channel/markdown-syntax.js';

/**
 * The agent's Markdown → what Slack shows, written once with exactly one level of escaping
 * (issue #20), through core's walker (`src/channel/markdown.ts`). Pure. Two targets:
 * - mrkdwn, the `text` of chat.postMessage / chat.update
 *   (https://docs.slack.dev/messaging/formatting-message-text): `&`, `<`, `>` are Slack's control
 *   characters and written as `&amp;`, `&lt;`, `&gt;` everywhere, code included; `*bold*`,
 *   `_italic_`, `~strike~`, `` `code` ``, ```` ``` ```` blocks, `<url|label>` links, `>` quotes.
 *   mrkdwn has no headings, lists or tables: a heading is a bold line, list items are written
 *   `• ` / `1. ` lines, a table is an aligned monospace table in a code block.
 * - `markdown_text` of the native stream (chat.startStream / appendStream), standard Markdown as
 *   Slack's markdown block reads it (https://docs.slack.dev/reference/block-kit/blocks/markdown-block):
 *   characters that could be markup are backslash-escaped ("Escaping special characters");
 *   tables, unsupported there, are the same monospace table in a code block.
 */

/** Slack's three control characters as entities (and no stray marker placeholder, see `MARKS`). */
function escapeControlCharacters(text: string): string {
  return text.replace(MARK_CHARS, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Where the walker put a formatting marker, until `renderMrkdwn` knows its neighbours: a private
 * use character per marker and side (text the model wrote never keeps these: `text` drops them).
 */
const MARKS = { '*': ['\ue010', '\ue011'], _: ['\ue012', '\ue013'], '~': ['\ue014', '\ue015'] } as const;
const MARK_CHARS = /[\ue010-\ue015]/g;
type Marker = keyof typeof MARKS;

/**
 * mrkdwn formatting does not cross a line break, and a marker next to a space does not open or
 * close: each line is wrapped on its own, around its text without the spaces at its ends.
 */
function wrapLines(inner: string, marker: Marker): string {
  const [open, close] = MARKS[marker];
  return inner
    .split('\n')
    .map((line) => {
      const match = /^(\s*)(.*?)(\s*)$/s.exec(line);
      const [, before = '', core = '', after = ''] = match ?? [];
      return core === '' ? line : `${before}${open}${core}${close}${after}`;
    })
    .join('\n');
}

/** Each placeholder character → its marker and whether it opens. */
const MARK_OF = new Map(
  (Object.entries(MARKS) as [Marker, readonly [string, string]][]).flatMap(([marker, [open, close]]) => [
    [open, { marker, isOpening: true }],
    [close, { marker, isOpening: false }],
  ]),
);

const WORD_CHAR = /[\p{L}\p{N}]/u;
const ZERO_WIDTH_SPACE = '\u200b';

/**
 * The markers, written. Undocumented (Slack's observed parser): a marker only opens after, and
 * closes before, a character that is not a letter or digit, so `foo**bar**` or bold inside
 * Chinese text would show its stars. A zero-width space between the marker and such a
 * neighbour makes the boundary without a visible change.
 */
function placeMarkers(written: string): string {
  let out = '';
  for (let i = 0; i < written.length; i++) {
    const char = written[i] as string;
    const mark = MARK_OF.get(char);
    if (mark === undefined) {
      out += char;
      continue;
    }
    const { marker, isOpening } = mark;
    const neighbour = isOpening ? out.at(-1) : written[i + 1];
    const needsBoundary = neighbour !== undefined && WORD_CHAR.test(neighbour);
    out += isOpening ? `${needsBoundary ? ZERO_WIDTH_SPACE : ''}${marker}` : `${marker}${needsBoundary ? ZERO_WIDTH_SPACE : ''}`;
  }
  return out;
}

/** A URL mrkdwn can carry in `<url|label>`: `&` as an entity, `<`, `>`, `|` percent-encoded. */
function mrkdwnUrl(url: string): string {
  return url.replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
}

/** Slack links only these; anything else (a relative path) shows as `label (target)`. */
const LINKABLE = /^(https?:\/\/|mailto:)/i;

/** How mrkdwn writes each construct. */
export const MRKDWN_DIALECT: MarkdownDialect = {
  text: escapeControlCharacters,
  strong: (inner) => wrapLines(inner, '*'),
  emphasis: (inner) => wrapLines(inner, '_'),
  strike: (inner) => wrapLines(inner, '~'),
  // A backtick cannot be escaped inside mrkdwn code: such a span is shown as text instead.
  inlineCode: (code) => (code.includes('`') ? escapeControlCharacters(code) : `\`${escapeControlCharacters(code)}\``),
  link: (label, url) => {
    if (!LINKABLE.test(url)) return `${label} (${escapeControlCharacters(url)})`;
    return label === escapeControlCharacters(url) ? `<${mrkdwnUrl(url)}>` : `<${mrkdwnUrl(url)}|${label}>`;
  },
  // The language tag is dropped: mrkdwn would show it as the code's first word. Three backticks
  // inside would end the block, so a zero-width space keeps them apart.
  codeBlock: (code) => `\`\`\`\n${escapeControlCharacters(code.replace(/```/g, '``\u200b`'))}\n\`\`\``,
  // A `>` written as `&gt;` is no quote: the marker stays a raw `>`.
  blockquote: quoteLines,
};

/** The agent's Markdown as mrkdwn (chat.postMessage / chat.update `text`). */
export function renderMrkdwn(markdown: string): string {
  return placeMarkers(renderMarkdown(markdown, MRKDWN_DIALECT));
}

/** Text the server itself wrote (plain, not Markdown), as mrkdwn that shows it as written. */
export function mrkdwnText(text: string): string {
  return escapeControlCharacters(text);
}

/** How `markdown_text` writes each construct. */
export const MARKDOWN_TEXT_DIALECT: MarkdownDialect = {
  text: backslashEscaped,
  strong: (inner) => `**${inner}**`,
  emphasis: (inner) => `*${inner}*`,
  strike: (inner) => `~~${inner}~~`,
  inlineCode: codeSpan,
  link: (label, url) => `[${label}](${linkTarget(url)})`,
  // "Code block with syntax highlighting" is not supported: the language is dropped.
  codeBlock: (code) => fencedCodeBlock(code),
  heading: (inner, depth) => `${'#'.repeat(depth)} ${inner}`,
  blockquote: quoteLines,
  listItem: (content, item) => markdownListItem(content, item),
};

/** The agent's Markdown as `markdown_text`. */
export function renderMarkdownText(markdown: string): string {
  return renderMarkdown(markdown, MARKDOWN_TEXT_DIALECT);
}

/** Characters after which a growing paragraph may still turn into markup (`**` opening bold, a link's `[`). */
const UNSETTLED = /[*_~`[\]<>!\\|]/;

/**
 * The part of a partial answer a native stream can show now, as `markdown_text`. A stream can
 * only append, so nothing may show that a later partial would write differently (an unclosed
 * `**` as two stars, half a fence): every block but the last, and the last too when it is a
 * paragraph of plain prose. Later blocks can still, rarely, change an earlier one (a `---` line
 * turning a paragraph into a heading); the stream then waits for the final.
 */
export function renderStreamingMarkdownText(partial: string): string {
  const tokens = lexMarkdown(partial);
  const lastIndex = tokens.findLastIndex((token) => token.type !== 'space');
  const last = tokens[lastIndex];
  if (last === undefined) return '';
  if (isSettledProse(last)) return renderMarkdownText(partial);
  // Where the last block starts: the lexer's tokens cover the text in order (their `raw` may differ at the end only).
  const end = tokens.slice(0, lastIndex).reduce((length, token) => length + token.raw.length, 0);
  return end === 0 ? '' : renderMarkdownText(partial.slice(0, end));
}

/** A paragraph of prose that more text cannot turn into markup: no marker in it, and a letter first (not a list's `1.`). */
function isSettledProse(token: Token): boolean {
  return token.type === 'paragraph' && !UNSETTLED.test(token.raw) && /^[\p{L}\p{Lo}]/u.test(token.raw);
}
