import { type MarkdownDialect, renderMarkdown } from '../../src/channel/markdown.js';
import { backslashEscaped, codeSpan, fencedCodeBlock, fenceLanguage, linkTarget, markdownListItem, markdownRule, markdownTable, quoteLines } from '../../src/channel/markdown-syntax.js';

/**
 * The agent's Markdown in WeCom's markdown (stream `content` and `markdown` messages), once, with
 * one level of escaping (issue #20). WeCom lists what its AI bot markdown draws
 * (https://developer.work.weixin.qq.com/document/path/101031, path/101138): headings, bold,
 * italic, ordered and unordered lists, quotes, links, images, rules, inline code, code blocks and
 * tables; strike-through is not among them, so it shows its text. Its clients also take HTML
 * tags (`<font color=…>`), so:
 * - text is escaped with CommonMark backslash escapes: `<`, `>`, `&` (a `<b>` or `&amp;` the
 *   model echoes shows as typed) and Markdown's characters, a line's leading `#`, `+`, `-`, `=`
 *   and a number's dot too (they would start a heading, list or rule);
 * - code stays raw inside its span or fence; tables are WeCom's own pipe tables.
 */
export const WECOM_MARKDOWN_DIALECT: MarkdownDialect = {
  text: backslashEscaped,
  strong: (inner) => `**${inner}**`,
  emphasis: (inner) => `*${inner}*`,
  strike: (inner) => inner,
  inlineCode: codeSpan,
  link: (label, url) => `[${label}](${linkTarget(url)})`,
  codeBlock: (code, language) => fencedCodeBlock(code, fenceLanguage(language)),
  blockquote: quoteLines,
  listItem: (content, item) => markdownListItem(content, item),
  table: markdownTable,
  rule: markdownRule,
};

/** The agent's Markdown as WeCom markdown. */
export function renderWeComMarkdown(markdown: string): string {
  return renderMarkdown(markdown, WECOM_MARKDOWN_DIALECT);
}
