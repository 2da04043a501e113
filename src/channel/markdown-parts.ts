import type { Token, Tokens } from 'marked';
import { lexMarkdown } from './markdown.js';
import { fencedCodeBlock } from './markdown-syntax.js';

/**
 * The agent's Markdown cut into parts that each show on their own within a platform's message
 * limit, pure. `measure` is the platform's count of a part once rendered (Discord: the content's
 * length; Telegram: the text after entity parsing), so the cut is made on the Markdown and no
 * part's markup is broken. Parts are whole blocks (paragraphs, lists, code blocks, tables,
 * quotes) while they fit. A block too long for one message is cut inside: a code block into
 * several blocks of whole lines, each with its fence and language; a table between rows, each
 * part with the header again; a list between items; a paragraph between its inline pieces
 * (never inside `**bold**` or a link), or at a space; a single line longer than a message at a
 * space, else anywhere. A part that would start with what Markdown reads as a block marker
 * (`- `, `> `, `1. `) gets it escaped, so every part shows the characters written.
 *
 * Parts join to the same visible text as the whole, apart from the blank lines between blocks
 * where a message ends. A part that would show nothing (blank lines, a link definition) is left
 * out; a text that shows nothing at all is one part, as written.
 */
export function markdownParts(markdown: string, maxChars: number, measure: (markdown: string) => number): string[] {
  const fits = (part: string) => measure(part) <= maxChars;
  // Escaping at most doubles prose, so a short block needs no rendering to know it fits; a table's padding can grow more.
  const fitsAlone = (token: Token) => (token.type !== 'table' && token.raw.length * 2 + 16 <= maxChars) || fits(token.raw);
  const pieces = lexMarkdown(markdown).flatMap((token) => (fitsAlone(token) ? [token.raw] : blockPieces(token, fits, maxChars)));
  const parts = groupWhile(pieces, maxChars, (group) => fits(group.join(''))).map((group) => group.join(''));
  const shown = parts.filter((part) => part.trim() !== '' && measure(part) > 0);
  return shown.length === 0 && markdown.trim() !== '' ? [markdown] : shown;
}

type Fits = (part: string) => boolean;

/** One block too long for a message, as self-contained Markdown pieces in order. */
function blockPieces(token: Token, fits: Fits, maxChars: number): string[] {
  switch (token.type) {
    case 'code':
      return codePieces(token as Tokens.Code, fits, maxChars);
    case 'table':
      return tablePieces(token.raw, fits, maxChars);
    case 'list':
      return listPieces(token as Tokens.List, fits, maxChars);
    case 'paragraph':
      return paragraphPieces(token as Tokens.Paragraph, fits, maxChars);
    default:
      return linePieces(token.raw, fits, maxChars);
  }
}

/**
 * Items, each written with the number Markdown gave it: a part starting mid-list starts at that
 * number (and two ordered lists that Markdown reads as one keep counting on).
 */
function listPieces(list: Tokens.List, fits: Fits, maxChars: number): string[] {
  const start = typeof list.start === 'number' ? list.start : 1;
  return list.items.flatMap((item, index) => {
    const raw = list.ordered ? item.raw.replace(/^( *)\d+/, (_match, spaces: string) => `${spaces}${start + index}`) : item.raw;
    return fits(raw) ? [raw] : linePieces(raw, fits, maxChars);
  });
}

/** Whole lines per block, each block fenced again with its language; a line too long is cut. */
function codePieces(code: Tokens.Code, fits: Fits, maxChars: number): string[] {
  const block = (body: string) => `${fencedCodeBlock(body, code.lang ?? '')}\n`;
  const bodyFits = (body: string) => fits(block(body));
  const lines = code.text.split('\n').flatMap((line) => (bodyFits(line) ? [line] : cutLine(line, bodyFits, maxChars, false)));
  return groupWhile(lines, maxChars, (group) => bodyFits(group.join('\n'))).map((group) => block(group.join('\n')));
}

/** Rows per part, each part with the header and its rule first. */
function tablePieces(raw: string, fits: Fits, maxChars: number): string[] {
  const [header = '', rule = '', ...rows] = raw.replace(/\n+$/, '').split('\n');
  const table = (group: string[]) => `${[header, rule, ...group].join('\n')}\n`;
  if (!fits(table(rows.slice(0, 1)))) return linePieces(raw, fits, maxChars);
  return groupWhile(rows, maxChars, (group) => fits(table(group))).map(table);
}

/**
 * A paragraph cut between its top-level inline tokens (so no style or link is split), at a line
 * break where one falls in the second half of a part, else inside text at a space; a piece ends
 * with its spaces, so the next starts with a word.
 */
function paragraphPieces(paragraph: Tokens.Paragraph, fits: Fits, maxChars: number): string[] {
  const tokens = paragraph.tokens ?? [];
  // Escaping at most doubles prose, so a short enough piece needs no rendering to know it fits.
  const fitsAlone = (raw: string) => raw.length * 2 + 16 <= maxChars || fits(raw);
  const words = (line: string) => line.split(/(?<=\s)(?=\S)/).flatMap((word) => (fitsAlone(word) ? [word] : cutLine(word, fits, maxChars, true)));
  const units = tokens.flatMap((token) => {
    if (token.type !== 'text') return fitsAlone(token.raw) ? [token.raw] : cutLine(token.raw, fits, maxChars, true);
    return token.raw.split(/(?<=\n)/).flatMap((line) => (fitsAlone(line) ? [line] : words(line)));
  });
  const rest = paragraph.raw.slice(tokens.map((token) => token.raw).join('').length);
  const piece = (group: string[], i: number) => (i === 0 ? group.join('') : protectStart(group.join('')));
  const groups = groupAtLineEnds(units, maxChars, (group) => fits(piece(group, 1)));
  return groups.map((group, i) => piece(group, i) + (i === groups.length - 1 ? rest : ''));
}

/**
 * Like {@link groupWhile}, but a full group is cut after its last unit that ends a line when
 * that keeps at least half of it, the rest starting the next group.
 */
function groupAtLineEnds(units: string[], maxChars: number, fits: (group: string[]) => boolean): string[][] {
  const groups: string[][] = [];
  for (let start = 0; start < units.length; ) {
    let end = fittingEnd(units, start, maxChars, fits);
    if (end < units.length) {
      const group = units.slice(start, end);
      const lineEnd = group.findLastIndex((unit) => unit.endsWith('\n')) + 1;
      if (lineEnd > 0 && group.slice(0, lineEnd).join('').length * 2 >= group.join('').length) end = start + lineEnd;
    }
    groups.push(units.slice(start, end));
    start = end;
  }
  return groups;
}

/** Whole lines while they fit (each starts a line, as in the block); a line too long is cut. */
function linePieces(raw: string, fits: Fits, maxChars: number): string[] {
  const lines = raw.split(/(?<=\n)/).flatMap((line) => (fits(line) ? [line] : cutLine(line, fits, maxChars, true)));
  return groupWhile(lines, maxChars, (group) => fits(group.join(''))).map((group) => group.join(''));
}

/**
 * `line` in pieces that fit: cut after the last space in the second half of what fits, else
 * where it stops fitting. With `isProse`, pieces after the first start mid-text: their start is
 * protected (code is never escaped).
 */
function cutLine(line: string, fits: Fits, maxChars: number, isProse: boolean): string[] {
  const pieces: string[] = [];
  const protect = (piece: string) => (isProse && pieces.length > 0 ? protectStart(piece) : piece);
  let rest = line;
  while (rest.length > 0 && !fits(protect(rest))) {
    let end = Math.min(rest.length, maxChars);
    while (end > 1 && !fits(protect(rest.slice(0, end)))) end = Math.max(1, Math.floor(end * 0.9));
    const space = rest.lastIndexOf(' ', end - 1);
    if (space >= end / 2) end = space + 1;
    // Never between the halves of a surrogate pair.
    if (end > 1 && /[\ud800-\udbff]/.test(rest[end - 1] ?? '')) end -= 1;
    pieces.push(protect(rest.slice(0, end)));
    rest = rest.slice(end);
  }
  if (rest.length > 0) pieces.push(protect(rest));
  return pieces;
}

/** Consecutive pieces grouped while `fits` holds for the group (a piece alone always makes a group). */
function groupWhile(items: readonly string[], maxChars: number, fits: (group: string[]) => boolean): string[][] {
  const groups: string[][] = [];
  for (let start = 0; start < items.length; ) {
    const end = fittingEnd(items, start, maxChars, fits);
    groups.push(items.slice(start, end));
    start = end;
  }
  return groups;
}

/**
 * The end of the longest group from `start` that fits (at least one piece), in a few renders
 * per part rather than one per piece: the first guess is as many pieces as `maxChars` Markdown
 * characters fill (rendering seldom shortens text), then the end gallops up from a fit or down
 * from a misfit and is bisected (a longer group never renders shorter, so the search holds).
 */
function fittingEnd(items: readonly string[], start: number, maxChars: number, fits: (group: string[]) => boolean): number {
  const fitsUpTo = (end: number) => fits(items.slice(start, end));
  let guess = start + 1;
  for (let chars = items[start]?.length ?? 0; guess < items.length && chars + (items[guess]?.length ?? 0) <= maxChars; guess++) {
    chars += items[guess]?.length ?? 0;
  }
  let good = start + 1;
  let bad = items.length + 1;
  if (guess === start + 1 || fitsUpTo(guess)) {
    good = guess;
    for (let step = Math.max(1, Math.ceil((guess - start) / 8)); good < items.length; step *= 2) {
      const probe = Math.min(items.length, good + step);
      if (!fitsUpTo(probe)) {
        bad = probe;
        break;
      }
      good = probe;
    }
  } else {
    bad = guess;
  }
  while (bad - good > 1) {
    const middle = Math.floor((good + bad) / 2);
    if (fitsUpTo(middle)) good = middle;
    else bad = middle;
  }
  return good;
}

/**
 * Markdown's block starts (CommonMark 0.31 §4-5: thematic breaks, headings, fences, quotes,
 * list items), which a piece cut out of the middle of a text must not begin with.
 */
const BLOCK_START = /^( {0,3})(?:([-+*](?=[ \t]|$)|>|#{1,6}(?=[ \t]|$)|```|~~~|([-*_])(?:[ \t]*\3){2,}[ \t]*$)|(\d{1,9})(?=[.)](?:[ \t]|$)))/m;

/** A piece cut out of a block starts mid-text: a block marker there is escaped, so it shows as written. */
function protectStart(piece: string): string {
  // `m` lets a thematic break end at its line; only a marker at the piece's very start counts.
  const match = piece.match(BLOCK_START);
  if (match?.index !== 0) return piece;
  const spaces = match[1] ?? '';
  const digits = match[4];
  // `1.` is escaped at its dot; the other markers at their first character.
  if (digits !== undefined) return `${spaces}${digits}\\${piece.slice(spaces.length + digits.length)}`;
  return `${spaces}\\${piece.slice(spaces.length)}`;
}
