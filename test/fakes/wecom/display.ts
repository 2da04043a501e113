import { type Display, type DisplayRules, displayMarkdown } from '../markdown-display.js';

/**
 * How WeCom shows a bot message, for `BotMessageView.shown` (issue #20), written from what WeCom
 * publishes, not from the adapter. Stream `content` and `markdown` messages are markdown
 * (https://developer.work.weixin.qq.com/document/path/101031 and path/101138: "支持常见的markdown
 * 格式": headings, bold, italic, lists, quotes, links, images, rules, inline code, code blocks,
 * tables). Strike-through is not listed: its tildes show. WeCom's markdown takes HTML tags
 * (`<font color="info">`), so a tag never shows its characters. Undocumented: the parser is
 * CommonMark's otherwise (backslash escapes, code blocks shown as written) and a newline in the
 * content breaks the line, as WeCom's own examples are written.
 */
export const WECOM_MARKDOWN_RULES: DisplayRules = {
  hasTables: true,
  hasStrike: false,
  hasInlineCode: true,
  isCodeBlockHtml: false,
  hasEmojiShortcodes: false,
  softBreak: '\n',
  tag: (raw) => (/^<br\s*\/?>$/i.test(raw) ? { shown: '\n' } : { shown: '' }),
};

/** What a stream or markdown message whose content is `markdown` shows. */
export function displayWeComMarkdown(markdown: string): Display {
  return displayMarkdown(markdown, WECOM_MARKDOWN_RULES);
}
