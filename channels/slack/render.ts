/**
 * Markdown (what the model writes) → Slack mrkdwn (https://docs.slack.dev/messaging/formatting-message-text).
 * Pure. Slack needs `&`, `<`, `>` escaped everywhere (a `>` starting a line stays: it is a
 * quote); `**bold**` becomes `*bold*`, `*italic*` `_italic_`, `~~strike~~` `~strike~`,
 * `[text](url)` `<url|text>`, `# Heading` a bold line, `- item` `• item`. Code (fenced or
 * inline) is escaped but otherwise left alone; a fence's language tag is dropped (Slack shows it
 * as code). Partial text (an unclosed `**`) stays literal until it is closed.
 */

const FENCE = /```[^\n`]*\n?([\s\S]*?)(?:```|$)/g;
const INLINE_CODE = /`[^`\n]+`/g;
const LINK = /\[([^\]\n]+)\]\((https?:\/\/[^\s)]+|mailto:[^\s)]+)\)/g;
/** Private-use characters mark where bold goes while italics are converted; never in model text in practice. */
const BOLD_MARK = '\uE000';

/** Escapes Slack's three control characters; `keepQuotes` keeps a `>` that starts a line. */
export function escapeMrkdwn(text: string, keepQuotes = false): string {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  if (!keepQuotes) return escaped.replace(/>/g, '&gt;');
  return escaped.replace(/(^|\n)( *)>|>/g, (_match, start: string | undefined, spaces: string | undefined) =>
    start !== undefined ? `${start}${spaces ?? ''}>` : '&gt;',
  );
}

/** Converts `markdown` to mrkdwn (see the module comment). */
export function markdownToMrkdwn(markdown: string): string {
  let out = '';
  let last = 0;
  for (const match of markdown.matchAll(FENCE)) {
    out += convertProse(markdown.slice(last, match.index));
    out += `\`\`\`${escapeMrkdwn(match[1] ?? '')}\`\`\``;
    last = match.index + match[0].length;
  }
  return out + convertProse(markdown.slice(last));
}

/** Prose with inline code spans kept verbatim (escaped). */
function convertProse(text: string): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(INLINE_CODE)) {
    out += convertInline(text.slice(last, match.index));
    out += escapeMrkdwn(match[0]);
    last = match.index + match[0].length;
  }
  return out + convertInline(text.slice(last));
}

function convertInline(text: string): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(LINK)) {
    out += convertEmphasis(text.slice(last, match.index));
    const url = (match[2] ?? '').replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
    out += `<${url}|${convertEmphasis(match[1] ?? '')}>`;
    last = match.index + match[0].length;
  }
  return out + convertEmphasis(text.slice(last));
}

function convertEmphasis(text: string): string {
  return escapeMrkdwn(text, true)
    .replace(/^(\s*)#{1,6}\s+(.+?)\s*#*\s*$/gm, `$1${BOLD_MARK}$2${BOLD_MARK}`)
    .replace(/^(\s*)[-*+]\s+/gm, '$1• ')
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, `${BOLD_MARK}$1${BOLD_MARK}`)
    .replace(/__(?=\S)([\s\S]*?\S)__/g, `${BOLD_MARK}$1${BOLD_MARK}`)
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?![\w*])/g, '$1_$2_')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '~$1~')
    .replaceAll(BOLD_MARK, '*');
}
