/**
 * What Slack's client puts in a message event's `text` for what a person typed
 * (https://docs.slack.dev/messaging/formatting-message-text, "Retrieving messages"): `&`, `<`
 * and `>` arrive as `&amp;`, `&lt;`, `&gt;`; a URL the person typed arrives linked, `<url>`; and a
 * mention, channel or link the person picked in the composer arrives as Slack's own markup. Those
 * picks are written in the typed text in that markup already (`<@U123>`, `<@U123|alice>`,
 * `<#C123|general>`, `<!here>`, `<https://x|label>`, `<mailto:a@b|a@b>`) and pass unchanged.
 */

/** Markup a person cannot type as characters: the composer inserts it for a pick. */
const PICKED_MARKUP = /<(?:@[UW][A-Z0-9]+(?:\|[^<>]*)?|#C[A-Z0-9]+(?:\|[^<>]*)?|![a-z]+(?:\^[^<>|]*)?(?:\|[^<>]*)?|(?:https?:\/\/|mailto:)[^<>|\s]+\|[^<>]*)>/g;
/** Undocumented: Slack links what looks like a URL, leaving trailing punctuation outside. */
const TYPED_URL = /https?:\/\/[^\s<>]*[^\s<>.,;:!?'")\]]/g;

export function composedText(typed: string): string {
  let text = '';
  let last = 0;
  for (const picked of typed.matchAll(PICKED_MARKUP)) {
    text += typedCharacters(typed.slice(last, picked.index));
    text += picked[0];
    last = picked.index + picked[0].length;
  }
  return text + typedCharacters(typed.slice(last));
}

function typedCharacters(typed: string): string {
  let text = '';
  let last = 0;
  for (const url of typed.matchAll(TYPED_URL)) {
    text += encodeEntities(typed.slice(last, url.index));
    text += `<${encodeEntities(url[0])}>`;
    last = url.index + url[0].length;
  }
  return text + encodeEntities(typed.slice(last));
}

function encodeEntities(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
