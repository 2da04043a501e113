import { type MarkdownDialect, renderMarkdown } from '../../src/channel/markdown.js';
import { fencedCodeBlock, fenceLanguage, markdownListItem, quoteLines } from '../../src/channel/markdown-syntax.js';

/**
 * The agent's Markdown in DingTalk's markdown (robot `markdown` / `sampleMarkdown` messages and
 * the AI card's `content`), once, with one level of escaping (issue #20). DingTalk documents a
 * subset (https://open.dingtalk.com/document/orgapp/message-types-and-data-format): headings,
 * quotes, bold, italic, links, images, lists. So:
 * - text is escaped with HTML character references: `<`, `>`, `&` (its clients render HTML in
 *   markdown messages, even inside code blocks, and mobile shows a message with HTML blank:
 *   https://github.com/eryajf/chatgpt-dingtalk/pull/213), and Markdown's characters (`*` as
 *   `&#42;`); a newline in text is a hard break (two spaces), or DingTalk would join the lines;
 * - inline code, which DingTalk does not draw, becomes bold; strike-through shows its text;
 * - code blocks stay fenced (drawn by the PC client, undocumented:
 *   https://github.com/eryajf/chatgpt-dingtalk/pull/209), their `<`, `>`, `&` escaped too;
 * - tables, which DingTalk does not draw, become a code block of aligned columns (the walker's
 *   default); lists are DingTalk's own, nested four spaces a level.
 */
export const DINGTALK_MARKDOWN_DIALECT: MarkdownDialect = {
  text: escapeDingTalkText,
  strong: (inner) => `**${inner}**`,
  emphasis: (inner) => `*${inner}*`,
  strike: (inner) => inner,
  inlineCode: (code) => `**${escapeDingTalkText(code)}**`,
  link: (label, url) => `[${label}](${url.replace(/[()\s<>]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)})`,
  codeBlock: (code, language) => fencedCodeBlock(escapeHtml(code), fenceLanguage(language)),
  blockquote: quoteLines,
  listItem: (content, item) => markdownListItem(content, item),
  lineBreak: '  \n',
};

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (c) => HTML_ENTITIES[c] as string);
}

/**
 * `text` as DingTalk markdown that shows exactly `text`: HTML's and Markdown's characters as
 * references, a line's leading `#`, `+`, `-`, `=` and a number's dot too (they would start a
 * heading, list or rule), newlines as hard breaks.
 */
export function escapeDingTalkText(text: string): string {
  return text
    .replace(/[&<>*_~`\\[\]|]/g, (c) => HTML_ENTITIES[c] ?? `&#${c.charCodeAt(0)};`)
    .replace(/^([ \t]*)([#+=-])/gm, (_whole, indent: string, lead: string) => `${indent}&#${lead.charCodeAt(0)};`)
    .replace(/^([ \t]*\d+)([.)])/gm, (_whole, number: string, dot: string) => `${number}&#${dot.charCodeAt(0)};`)
    .replace(/\n/g, '  \n');
}

/** The agent's Markdown as DingTalk markdown. */
export function renderDingTalkMarkdown(markdown: string): string {
  return renderMarkdown(markdown, DINGTALK_MARKDOWN_DIALECT);
}
