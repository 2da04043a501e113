/**
 * What a person sees of a WeChat text message: the text itself, character for character (WeChat
 * renders no markup: `text_item.text` is plain text), with each http(s) URL tappable, as WeChat
 * clients make them. A URL ends at whitespace; closing punctuation right after it is not part of it.
 */
export function displayText(text: string): { shown: string; links: { text: string; url: string }[] } {
  const links = [...text.matchAll(/https?:\/\/\S+/g)].map((match) => match[0].replace(/[)\].,;:!?'"]+$/, '')).map((url) => ({ text: url, url }));
  return { shown: text, links };
}
