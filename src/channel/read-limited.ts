/**
 * A download's body, read only up to `maxBytes`: past that the stream is cancelled and
 * `tooLarge()` is thrown, so a platform that under-declares a file's size never fills memory.
 * A response without a body reads as no bytes; stream errors propagate.
 */
export async function readLimited(response: Response, maxBytes: number, tooLarge: () => Error): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
