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

/** `markdown` under the preview, quoted; `markdown` itself without one. */
export function withSourcePreview(markdown: string, preview: string | undefined): string {
  if (preview === undefined || preview === '') return markdown;
  const quoted = preview
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
  return `${quoted}\n\n${markdown}`;
}
