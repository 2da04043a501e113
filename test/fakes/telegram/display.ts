import type { MessageEntity } from 'grammy/types';
import type { FormattedText } from './parse-mode.js';

/**
 * What a person sees of a message, in the canonical form of `test/contract/round-trip.ts`.
 * Telegram draws entities over the text without adding or removing characters
 * (https://core.telegram.org/bots/api#messageentity): bold, italic, code and the rest style
 * their stretch, `pre` shows its lines in monospace without a fence, and a `text_link` shows its
 * label. Telegram has no list or table entities, so bullets and table rows are the text itself.
 * So the shown text is the stored text, and the native links are its `text_link` entities.
 */
export interface MessageDisplay {
  shown: string;
  links: { text: string; url: string }[];
}

export function displayOf(formatted: FormattedText): MessageDisplay {
  const links = formatted.entities
    .filter((e): e is MessageEntity.TextLinkMessageEntity => e.type === 'text_link')
    .map((e) => ({ text: formatted.text.slice(e.offset, e.offset + e.length), url: e.url }));
  return { shown: formatted.text, links };
}
