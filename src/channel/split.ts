/**
 * Cutting reply text to a platform's message limit. Lengths are UTF-16 code units (JavaScript
 * `string.length`), which is what Telegram counts after entity parsing
 * (https://core.telegram.org/bots/api#messageentity) and never fewer than code points, so a
 * chunk that fits here fits every platform that counts code points.
 */

const ELLIPSIS = '…';

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Moves `end` back by one when cutting there would separate a surrogate pair. */
function safeEnd(text: string, end: number): number {
  if (end <= 0 || end >= text.length) return end;
  return isHighSurrogate(text.charCodeAt(end - 1)) && isLowSurrogate(text.charCodeAt(end)) ? end - 1 : end;
}

function assertMaxChars(maxChars: number): void {
  if (!Number.isInteger(maxChars) || maxChars < 2) {
    throw new RangeError(`maxChars must be an integer >= 2, got ${maxChars}`);
  }
}

/**
 * Splits `text` into chunks of at most `maxChars` UTF-16 code units, in order, with nothing lost
 * or added: `chunks.join('') === text`.
 *
 * A chunk ends after the last newline that falls in the second half of its window, so
 * paragraphs stay whole where they can; otherwise it is cut hard at `maxChars` (one unit less
 * when that would split a surrogate pair). Never returns an empty chunk; `''` gives `[]`.
 *
 * @throws RangeError when `maxChars` is not an integer >= 2 (a surrogate pair needs two units).
 */
export function splitText(text: string, maxChars: number): string[] {
  assertMaxChars(maxChars);
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > maxChars) {
    const newline = rest.lastIndexOf('\n', maxChars - 1);
    const end = newline >= Math.floor(maxChars / 2) ? newline + 1 : safeEnd(rest, maxChars);
    chunks.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
  if (rest.length > 0) chunks.push(rest);
  return chunks;
}

/**
 * Shortens `text` to at most `maxChars` UTF-16 code units for a partial (streaming) update:
 * unchanged when it fits, else the first `maxChars - 1` units (never half a surrogate pair)
 * followed by `…`.
 *
 * @throws RangeError when `maxChars` is not an integer >= 2.
 */
export function truncateText(text: string, maxChars: number): string {
  assertMaxChars(maxChars);
  if (text.length <= maxChars) return text;
  return text.slice(0, safeEnd(text, maxChars - 1)) + ELLIPSIS;
}
