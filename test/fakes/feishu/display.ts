import { type Display, type DisplayRules, displayMarkdown } from '../markdown-display.js';

/**
 * How Feishu shows a bot message, for `BotMessageView.shown` (issue #20), written from Feishu's
 * published rules, not from the adapter:
 *
 * - A card's markdown element, card JSON 2.0 (the version the adapter sends):
 *   https://open.feishu.cn/document/feishu-cards/card-json-v2-components/content-components/rich-text
 *   Standard Markdown: bold, italic, `~~strike~~`, inline code, code blocks, links, lists,
 *   quotes, headings, and tables ("标题、引用、行内引用、表格…仅支持在 JSON 2.0 结构的富文本组件中使用",
 *   https://open.larkoffice.com/document/uAjLw4CM/ukzMukzMukzM/feishu-cards/card-components/content-components/rich-text).
 *   A newline in the content breaks the line (the docs write every line of their examples so).
 *   JSON 2.0 cards render HTML ("Cards support some HTML syntax, but you need to use … JSON 2.0",
 *   https://open.feishu.cn/document/common-capabilities/message-card/message-card), so a tag
 *   never shows its own characters; `<at id=ou_…></at>` mentions, and pings, that user.
 *   `:OK:`, `:DONE:` are Feishu emoji ("飞书表情", Lark's own card reference:
 *   https://github.com/larksuite/cli/blob/main/skills/lark-im/references/card/components/markdown.md).
 *   Undocumented: HTML character references (`&lt;`, `&#42;`) decode as in HTML; that is how
 *   text shows `<`, `&` and Markdown's characters as typed.
 * - A `text` message shows its text, but for a few tags and links (`displayText`):
 *   https://open.feishu.cn/document/server-docs/im-v1/message-content-description/create_json
 */
export const FEISHU_CARD_RULES: DisplayRules = {
  hasTables: true,
  hasStrike: true,
  hasInlineCode: true,
  isCodeBlockHtml: false,
  hasEmojiShortcodes: true,
  softBreak: '\n',
  tag(raw) {
    const at = /^<at\s+(?:id|user_id)\s*=\s*["']?([^"'\s>]+)["']?[^>]*>$/i.exec(raw);
    if (at) return { shown: `@${at[1]}`, mention: at[1] as string };
    if (/^<br\s*\/?>$/i.test(raw)) return { shown: '\n' };
    return { shown: '' };
  },
};

/** What a card's markdown element shows. */
export function displayCardMarkdown(markdown: string): Display {
  return displayMarkdown(markdown, FEISHU_CARD_RULES);
}

/**
 * What a `text` message shows: its text, with the tags the text type takes as markup
 * (`<at user_id="ou_…">name</at>` a mention, `<b>` `<i>` `<u>` `<s>` styles) and `[text](url)`
 * links, per the text section of the message content page.
 */
export function displayText(text: string): Display {
  const mentions: string[] = [];
  const links: { text: string; url: string }[] = [];
  const shown = text
    .replace(/<at\s+user_id\s*=\s*"([^"]*)"\s*>([^<]*)<\/at>/g, (_whole, id: string, name: string) => {
      mentions.push(id);
      return `@${name || id}`;
    })
    .replace(/<\/?[bius]>/g, '')
    .replace(/\[([^\]]*)\]\((https?:\/\/[^)\s]+)\)/g, (_whole, label: string, url: string) => {
      links.push({ text: label, url });
      return label;
    });
  return { shown, links, mentions };
}

/** What a bot message of `msgType` whose text (card markdown, or a text's text) is `text` shows. */
export function displayMessage(msgType: string, text: string): Display {
  return msgType === 'interactive' ? displayCardMarkdown(text) : displayText(text);
}
