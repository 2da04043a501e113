import { markdownParts } from '../../src/channel/markdown-parts.js';
import { renderDiscord } from './render.js';

/** The agent's Markdown in parts that each render within `maxChars` of Discord `content` (`markdownParts`). */
export function discordParts(markdown: string, maxChars: number): string[] {
  return markdownParts(markdown, maxChars, (part) => renderDiscord(part).length);
}

/**
 * `markdown` rendered within `maxChars`: whole when it fits, else its first part and `…`, so a
 * streamed answer longer than a message shows no broken markup. Only the text's start is cut
 * into parts: what follows a few messages' worth cannot be in the first.
 */
export function renderWithin(markdown: string, maxChars: number): string {
  const start = markdown.slice(0, 4 * maxChars);
  if (start.length === markdown.length) {
    const whole = renderDiscord(markdown);
    // Markdown that shows nothing (a link definition) is shown as typed: Discord refuses an empty message.
    if (whole.trim() === '' && markdown.trim() !== '') return renderWithin(`\\${markdown.trimStart()}`, maxChars);
    if (whole.length <= maxChars) return whole;
  }
  const [first = ''] = discordParts(start, maxChars - 1);
  return `${renderDiscord(first)}…`;
}
