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
