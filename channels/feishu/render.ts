import { type MarkdownDialect, renderMarkdown } from '../../src/channel/markdown.js';
import { codeSpan, fencedCodeBlock, fenceLanguage, linkTarget, markdownListItem, markdownRule, markdownTable, quoteLines } from '../../src/channel/markdown-syntax.js';

/**
 * The agent's Markdown in the dialect of a card's markdown element (card JSON 2.0,
 * https://open.feishu.cn/document/feishu-cards/card-json-v2-components/content-components/rich-text):
 * standard Markdown with tables, plus HTML tags (`<at>`, `<font>`, `<br>`…) that JSON 2.0
 * interprets. Text is escaped once, with HTML character references, so it shows as typed:
 * `<`, `>`, `&` as `&lt;` `&gt;` `&amp;` (a `<b>` or `<at id=…>` the model echoes never turns
 * into markup or a ping), and the characters Markdown would read as markup as numeric references
 * (`*` `&#42;`). Code stays raw inside its fence. Links are `[label](url)` for http(s) targets,
 * which Feishu requires; any other target shows as `label (url)` text.
 */
export const FEISHU_CARD_DIALECT: MarkdownDialect = {
  text: escapeCardText,
  strong: (inner) => `**${inner}**`,
  emphasis: (inner) => `*${inner}*`,
  strike: (inner) => `~~${inner}~~`,
  inlineCode: codeSpan,
  link: cardLink,
  codeBlock: (code, language) => fencedCodeBlock(code, fenceLanguage(language)),
  blockquote: quoteLines,
  // Nested lists indent four spaces a level, the indentation Feishu's own examples use.
  listItem: (content, item) => markdownListItem(content, item),
  table: markdownTable,
  rule: markdownRule,
};

/** Characters that can start Markdown anywhere in a line, or an HTML tag or reference. */
const CARD_SPECIALS = /[&<>*_~`\\[\]|]/g;
const CARD_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * `text` as card markdown that shows exactly `text`. Besides the characters that are markup
 * anywhere, a line's first `#`, `+`, `-`, `=` or the dot of `1.` would start a heading, list or
 * rule, and the colon that opens `:OK:` an emoji, so those are referenced too.
 */
export function escapeCardText(text: string): string {
  return text
    .replace(CARD_SPECIALS, (c) => CARD_ENTITIES[c] ?? `&#${c.charCodeAt(0)};`)
    .replace(/^([ \t]*)([#+=-])/gm, (_whole, indent: string, lead: string) => `${indent}&#${lead.charCodeAt(0)};`)
    .replace(/^([ \t]*\d+)([.)])/gm, (_whole, number: string, dot: string) => `${number}&#${dot.charCodeAt(0)};`)
    // `:OK:` would be a Feishu emoji.
    .replace(/:(?=[A-Za-z][A-Za-z0-9_]*:)/g, '&#58;');
}

/** `[label](url)` for the http(s) links Feishu accepts; any other target as text after its label. */
function cardLink(label: string, url: string): string {
  if (/^https?:\/\//i.test(url)) return `[${label}](${linkTarget(url)})`;
  return label === escapeCardText(url) ? label : `${label}${escapeCardText(` (${url})`)}`;
}

/** The agent's Markdown as card markdown. */
export function renderCardMarkdown(markdown: string): string {
  return renderMarkdown(markdown, FEISHU_CARD_DIALECT);
}

/**
 * An interactive card (schema 2.0) showing `markdown`, as the JSON string `content` Feishu takes.
 * `update_multi: true` makes it patchable for everyone in the chat (im.message.patch).
 */
export function renderCard(markdown: string): string {
  return JSON.stringify({
    schema: '2.0',
    config: { update_multi: true, wide_screen_mode: true },
    body: { elements: [{ tag: 'markdown', content: markdown }] },
  });
}

/** The element CardKit streams into. */
export const STREAM_ELEMENT_ID = 'answer';

/**
 * A CardKit card entity (`type: card_json`) in streaming mode with one markdown element,
 * `STREAM_ELEMENT_ID`, showing `markdown`; its `data` string.
 */
export function renderStreamingCard(markdown: string): string {
  return JSON.stringify({
    schema: '2.0',
    config: { streaming_mode: true, update_multi: true, summary: { content: '' } },
    body: { elements: [{ tag: 'markdown', element_id: STREAM_ELEMENT_ID, content: markdown }] },
  });
}

/** Lines and characters of a {@link sourcePreview}. */
const PREVIEW_LINES = 3;
const PREVIEW_CHARS = 240;

/**
 * What a message in a group topic said, shortened for the top of the card answering it (in a
 * busy topic the answer shows which message it answers): its first three non-empty lines, at most
 * 240 characters (reference §6.4).
 */
export function sourcePreview(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .slice(0, PREVIEW_LINES)
    .join('\n');
  const chars = Array.from(lines); // Code points: a cut never splits an emoji.
  return chars.length > PREVIEW_CHARS ? `${chars.slice(0, PREVIEW_CHARS - 3).join('')}...` : lines;
}

/** Card markdown under the preview (the person's text, quoted as text); the card markdown itself without one. */
export function withSourcePreview(cardMarkdown: string, preview: string | undefined): string {
  if (preview === undefined || preview === '') return cardMarkdown;
  const quoted = preview
    .split('\n')
    .map((line) => `> ${escapeCardText(line)}`)
    .join('\n');
  return `${quoted}\n\n${cardMarkdown}`;
}
