import { type Display, type DisplayRules, displayMarkdown } from '../markdown-display.js';
import type { BotMessageKind } from './chat.js';

/**
 * How DingTalk shows a bot message, for `BotMessageView.shown` (issue #20), written from what
 * DingTalk publishes and what people report of its clients, not from the adapter:
 *
 * - `markdown` messages (and, here, an AI card's markdown `content`): the documented subset is
 *   headings, quotes, bold, italic, links, images, unordered and ordered lists
 *   (https://open.dingtalk.com/document/orgapp/message-types-and-data-format, the markdown
 *   type). No tables, strike-through or inline code: their characters show as typed. Lines
 *   join as CommonMark's do (a line break needs two trailing spaces).
 * - Undocumented: fenced code blocks are drawn (by the PC client,
 *   https://github.com/eryajf/chatgpt-dingtalk/pull/209), and the client renders HTML in a
 *   markdown message, inside code blocks too; escaped as character references it shows as
 *   text (https://github.com/eryajf/chatgpt-dingtalk/pull/213). So every tag is markup here
 *   and references decode everywhere. `<font color=…>` is DingTalk's own colour tag.
 * - `text` messages show their text as written.
 */
export const DINGTALK_MARKDOWN_RULES: DisplayRules = {
  hasTables: false,
  hasStrike: false,
  hasInlineCode: false,
  isCodeBlockHtml: true,
  hasEmojiShortcodes: false,
  softBreak: ' ',
  tag: (raw) => (/^<br\s*\/?>$/i.test(raw) ? { shown: '\n' } : { shown: '' }),
};

/** What a bot message of `kind` whose text (markdown, card content or text) is `text` shows. */
export function displayMessage(kind: BotMessageKind, text: string): Display {
  return kind === 'markdown' || kind === 'card' ? displayMarkdown(text, DINGTALK_MARKDOWN_RULES) : { shown: text, links: [], mentions: [] };
}
