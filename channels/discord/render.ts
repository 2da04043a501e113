import { type MarkdownDialect, renderMarkdown } from '../../src/channel/markdown.js';
import { linkTarget } from '../../src/channel/markdown-syntax.js';

/**
 * The agent's Markdown → Discord's own Markdown dialect ("Markdown Text 101",
 * https://support.discord.com/hc/en-us/articles/210298617; mentions and timestamps:
 * https://discord.com/developers/docs/reference#message-formatting), pure, escaped once.
 *
 * Discord hides a backslash before any punctuation and shows the character, so prose is escaped
 * with backslashes, and only where a character could be markup:
 * - always `\`, `*`, `_`, `~`, `` ` ``, `|` (spoilers), `[` and `]` (masked links): they form
 *   markup in pairs, and a pair can close across what the walker hands over in pieces;
 * - at a line's start `>` (quotes), `#` (headers), `-` (lists, subtext), `+` and `1.` (lists);
 * - `<` where it would open a mention (`<@`, `<#1`), an emoji (`<:name:1`), a timestamp
 *   (`<t:1`), a command (`</name:1`), a server page (`<id:`) or a link (`<https://`).
 * Code is never escaped (Discord shows code as written); a ``` inside a code block, which no
 * fence can hold, gets a zero-width space between its backticks.
 */

/** The characters that form markup wherever they are. */
const ALWAYS_MARKUP = /[\\*_~`|[\]]/g;
/**
 * Markup at a line's start (after optional spaces): quotes, headers, list markers, subtext; and
 * a `.` or `)` that starts a piece of text, which may follow a number the walker wrote
 * separately (`1\. not a list` arrives as `1`, then `.`).
 */
const LINE_START_MARKUP = /(^|\n)( *)(>|#|-|\+|\d+(?=[.)]))|^()()([.)])(?=\s|$)/g;
/**
 * A `<` that would open a mention, a channel, an emoji, a timestamp, a command, a server page or
 * a link; or that ends a piece of text, since the next piece may complete one (`\<@1>` arrives
 * as `<`, then `@1>`).
 */
const ANGLE_MARKUP = /<(?=@|#\d|a?:\w+:\d|t:-?\d|\/[^>\n]*:\d|id:|https?:\/\/|$)/g;
/** Languages Discord reads after a fence; another word would show as the block's first line. */
const FENCE_LANGUAGE = /^[a-z0-9_+\-.#]+$/i;
const ZERO_WIDTH_SPACE = '\u200b';

/** `text` written so Discord shows it exactly, as prose (see the module comment). */
export function escapeDiscordText(text: string): string {
  return text
    .replace(ALWAYS_MARKUP, '\\$&')
    .replace(LINE_START_MARKUP, (_match, start = '', spaces = '', marker = '', _none, _empty, punctuation?: string) => {
      if (punctuation !== undefined) return `\\${punctuation}`;
      return /^\d/.test(marker) ? `${start}${spaces}${marker}\\` : `${start}${spaces}\\${marker}`;
    })
    .replace(ANGLE_MARKUP, '\\<');
}

/** Inline code in the fewest backticks that hold it, padded when it starts or ends with one. */
function inlineCode(code: string): string {
  const longestRun = Math.max(0, ...[...code.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = '`'.repeat(longestRun + 1);
  const padding = code.startsWith('`') || code.endsWith('`') ? ' ' : '';
  return `${fence}${padding}${code}${padding}${fence}`;
}

function codeBlock(code: string, language: string | undefined): string {
  const tag = language !== undefined && FENCE_LANGUAGE.test(language) ? language : '';
  // Discord shows nothing for a block without a character; a space keeps the box.
  const body = code.replaceAll('```', `\`${ZERO_WIDTH_SPACE}\`\``).replace(/^\n*$/, ' ');
  return `\`\`\`${tag}\n${body}\n\`\`\``;
}

/**
 * `[label](<url>)`: angle brackets keep Discord from adding a preview to every link, which a bot's
 * answer full of sources would otherwise be buried under. Discord masks http(s) links only;
 * others show as `label (url)`.
 */
function link(label: string, url: string): string {
  if (!/^https?:\/\//i.test(url)) return label === escapeDiscordText(url) ? label : `${label} (${escapeDiscordText(url)})`;
  // Percent-encoded: a space or bracket would end the link early.
  const target = linkTarget(url);
  if (label === escapeDiscordText(url) || label === '') return `<${target}>`;
  return `[${label}](<${target}>)`;
}

/** Discord's dialect for the shared walker (`src/channel/markdown.ts`). */
export const DISCORD_DIALECT: MarkdownDialect = {
  text: escapeDiscordText,
  strong: (inner) => `**${inner}**`,
  emphasis: (inner) => `*${inner}*`,
  strike: (inner) => `~~${inner}~~`,
  inlineCode,
  link,
  codeBlock,
  // Discord has three header sizes.
  heading: (inner, depth) => `${'#'.repeat(Math.min(depth, 3))} ${inner}`,
  // Discord's quotes do not nest: an inner quote's lines join the outer one.
  blockquote: (inner) =>
    inner
      .split('\n')
      .map((line) => (line.startsWith('> ') ? line : `> ${line}`))
      .join('\n'),
  listItem: (content, item) => `${'  '.repeat(item.depth)}${item.ordered ? `${item.number}.` : '-'} ${content}`,
  rule: () => escapeDiscordText('———'),
};

/** The agent's Markdown as Discord shows it (see the module comment). A half-written stream renders too. */
export function renderDiscord(markdown: string): string {
  return renderMarkdown(markdown, DISCORD_DIALECT);
}
