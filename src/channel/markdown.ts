import { Lexer, type Token, type Tokens } from 'marked';

/**
 * The agent writes Markdown; each platform shows its own format. One walker reads the Markdown
 * (GitHub-flavoured, with marked's lexer, which also takes a half-written stream without
 * complaint) and asks a platform's {@link MarkdownDialect} how to write each construct, so every
 * adapter escapes exactly once and no adapter parses Markdown itself.
 *
 * Raw HTML in the Markdown is text: the person who typed `<b>` or the model that echoed it meant
 * the characters. Entities (`&amp;`) are text too, shown as written, for the same reason.
 */

/** How one platform writes each construct. Inner content arrives already written in the dialect. */
export interface MarkdownDialect {
  /** Prose characters, escaped so they show as written (never called for code). */
  text(text: string): string;
  strong(inner: string): string;
  emphasis(inner: string): string;
  strike(inner: string): string;
  /** Inline code; `code` is raw. */
  inlineCode(code: string): string;
  /** A link; `label` is written, `url` raw. An autolink's label is its url. */
  link(label: string, url: string): string;
  /** A code block; `code` is raw, without the fence. */
  codeBlock(code: string, language: string | undefined): string;
  /** Default: the heading's text in {@link strong}. */
  heading?(inner: string, depth: number): string;
  /** Default: each line of the written inner blocks after a `> ` written as text. */
  blockquote?(inner: string): string;
  /**
   * One list item's first line. Default: two spaces per level of `depth` (0 at the top), then
   * `• ` or `<n>. `, written as text, then the item's content.
   */
  listItem?(content: string, item: ListItemPosition): string;
  /** Default: {@link alignedTable} of the cells' plain text, in a {@link codeBlock}. */
  table?(table: MarkdownTable): string;
  /** A thematic break. Default: `———` written as text. */
  rule?(): string;
  /** A hard line break inside a paragraph. Default: a newline. */
  lineBreak?: string;
}

export interface ListItemPosition {
  ordered: boolean;
  /** The item's number in an ordered list (its start counted), else 0. */
  number: number;
  /** Nesting level: 0 for a top-level list. */
  depth: number;
  /** A task list item's box, when it has one. */
  checked?: boolean;
}

export interface MarkdownTableCell {
  /** The cell written in the dialect. */
  written: string;
  /** The cell's visible text, without markup. */
  plain: string;
}

export interface MarkdownTable {
  header: MarkdownTableCell[];
  rows: MarkdownTableCell[][];
  align: ('left' | 'right' | 'center' | null)[];
}

/** GitHub-flavoured Markdown → tokens. */
export function lexMarkdown(markdown: string): Token[] {
  return new Lexer({ gfm: true }).lex(markdown);
}

/** Writes `markdown` in `dialect`: blocks in order, a blank line where the Markdown had one. */
export function renderMarkdown(markdown: string, dialect: MarkdownDialect): string {
  return new Walker(dialect).blocks(lexMarkdown(markdown), 0);
}

/**
 * A table as monospace text: every cell padded to its column's widest, `| a | b |` rows, the
 * header rule as dashes. For platforms without tables, inside a code block.
 */
export function alignedTable(header: string[], rows: string[][]): string {
  const columns = Math.max(header.length, ...rows.map((row) => row.length));
  const cellAt = (row: string[], column: number) => row[column] ?? '';
  const widths = Array.from({ length: columns }, (_, column) =>
    Math.max(3, ...[header, ...rows].map((row) => displayWidth(cellAt(row, column)))),
  );
  const line = (row: string[]) => `| ${widths.map((width, column) => pad(cellAt(row, column), width)).join(' | ')} |`;
  const rule = `| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Visible text with no markup: what {@link renderMarkdown} gives for a platform that shows plain text. */
export const PLAIN_TEXT_DIALECT: MarkdownDialect = {
  text: (text) => text,
  strong: (inner) => inner,
  emphasis: (inner) => inner,
  strike: (inner) => inner,
  inlineCode: (code) => code,
  // An autolink (a bare url, `www.` address or e-mail address in the text) shows once, as written.
  link: (label, url) => (label === url || url === `mailto:${label}` || url === `http://${label}` ? label : `${label} (${url})`),
  codeBlock: (code) => code,
};

class Walker {
  constructor(private readonly dialect: MarkdownDialect) {}

  blocks(tokens: Token[], depth: number): string {
    let out = '';
    let pendingBlankLine = false;
    for (const token of tokens) {
      if (token.type === 'space') {
        pendingBlankLine = out !== '';
        continue;
      }
      const written = this.block(token, depth);
      if (written === undefined) continue;
      if (out !== '') out += pendingBlankLine ? '\n\n' : '\n';
      out += written;
      pendingBlankLine = false;
    }
    return out;
  }

  private block(token: Token, depth: number): string | undefined {
    const { dialect } = this;
    switch (token.type) {
      case 'paragraph':
        return this.inline((token as Tokens.Paragraph).tokens).replace(/\n+$/, '');
      case 'text': {
        const text = token as Tokens.Text;
        return text.tokens ? this.inline(text.tokens).replace(/\n+$/, '') : dialect.text(text.raw.replace(/\n+$/, ''));
      }
      case 'heading': {
        const heading = token as Tokens.Heading;
        const inner = this.inline(heading.tokens);
        return dialect.heading ? dialect.heading(inner, heading.depth) : dialect.strong(inner);
      }
      case 'code': {
        const code = token as Tokens.Code;
        return dialect.codeBlock(code.text, code.lang || undefined);
      }
      case 'blockquote': {
        const inner = this.blocks((token as Tokens.Blockquote).tokens, depth);
        if (dialect.blockquote) return dialect.blockquote(inner);
        return inner
          .split('\n')
          .map((line) => dialect.text('> ') + line)
          .join('\n');
      }
      case 'list':
        return this.list(token as Tokens.List, depth);
      case 'table':
        return this.table(token as Tokens.Table);
      case 'hr':
        return dialect.rule ? dialect.rule() : dialect.text('———');
      case 'html':
        return dialect.text(token.raw.replace(/\n+$/, ''));
      case 'def':
        // A link reference definition shows nothing where it stands.
        return undefined;
      default:
        return 'raw' in token && typeof token.raw === 'string' ? dialect.text(token.raw.replace(/\n+$/, '')) : undefined;
    }
  }

  private list(list: Tokens.List, depth: number): string {
    const start = typeof list.start === 'number' ? list.start : 1;
    return list.items
      .map((item, index) => {
        const position: ListItemPosition = {
          ordered: list.ordered,
          number: list.ordered ? start + index : 0,
          depth,
          ...(item.task ? { checked: item.checked === true } : {}),
        };
        const [first, ...rest] = item.tokens.filter((token) => token.type !== 'checkbox');
        const isLead = first !== undefined && (first.type === 'text' || first.type === 'paragraph');
        const content = isLead ? (this.block(first, depth) ?? '') : '';
        const box = item.task ? this.dialect.text(item.checked ? '[x] ' : '[ ] ') : '';
        const line = this.listItemLine(box + content, position);
        const nested = this.blocks(isLead ? rest : item.tokens, depth + 1);
        return nested === '' ? line : `${line}\n${nested}`;
      })
      .join('\n');
  }

  private listItemLine(content: string, position: ListItemPosition): string {
    if (this.dialect.listItem) return this.dialect.listItem(content, position);
    const marker = position.ordered ? `${position.number}. ` : '• ';
    return this.dialect.text('  '.repeat(position.depth) + marker) + content;
  }

  private table(table: Tokens.Table): string {
    const cell = (c: Tokens.TableCell): MarkdownTableCell => ({ written: this.inline(c.tokens), plain: plainInline(c.tokens) });
    const model: MarkdownTable = { header: table.header.map(cell), rows: table.rows.map((row) => row.map(cell)), align: table.align };
    if (this.dialect.table) return this.dialect.table(model);
    const plain = (row: MarkdownTableCell[]) => row.map((c) => c.plain);
    return this.dialect.codeBlock(alignedTable(plain(model.header), model.rows.map(plain)), undefined);
  }

  inline(tokens: Token[] | undefined): string {
    let out = '';
    // Adjacent text and backslash escapes are one run of text for the dialect, so a rule about
    // where text stands (a line-leading `2.` must not start a list) sees all of it.
    let text = '';
    for (const token of tokens ?? []) {
      const literal = literalText(token);
      if (literal !== undefined) {
        text += literal;
        continue;
      }
      if (text !== '') out += this.dialect.text(text);
      text = '';
      out += this.inlineToken(token);
    }
    return text === '' ? out : out + this.dialect.text(text);
  }

  private inlineToken(token: Token): string {
    const { dialect } = this;
    switch (token.type) {
      case 'text': {
        // `raw`, not `text`: marked decodes character references in `text`, and they are text to us.
        const text = token as Tokens.Text;
        return text.tokens ? this.inline(text.tokens) : dialect.text(text.raw);
      }
      case 'escape':
        return dialect.text((token as Tokens.Escape).text);
      case 'strong':
        return dialect.strong(this.inline((token as Tokens.Strong).tokens));
      case 'em':
        return dialect.emphasis(this.inline((token as Tokens.Em).tokens));
      case 'del':
        return dialect.strike(this.inline((token as Tokens.Del).tokens));
      case 'codespan':
        return dialect.inlineCode((token as Tokens.Codespan).text);
      case 'link': {
        const link = token as Tokens.Link;
        return dialect.link(this.inline(link.tokens), link.href);
      }
      case 'image': {
        const image = token as Tokens.Image;
        return dialect.link(dialect.text(image.text || image.href), image.href);
      }
      case 'br':
        return dialect.lineBreak ?? '\n';
      default:
        // Inline HTML and anything newer than this walker: the characters as written.
        return dialect.text(token.raw);
    }
  }
}

/** The characters a plain text or escape token stands for; `undefined` for any other token. */
function literalText(token: Token): string | undefined {
  if (token.type === 'escape') return (token as Tokens.Escape).text;
  // `raw`, not `text`: marked decodes character references in `text`, and they are text to us.
  if (token.type === 'text' && !(token as Tokens.Text).tokens) return token.raw;
  return undefined;
}

/** Inline tokens' visible text, without markup (a table cell's width). */
function plainInline(tokens: Token[] | undefined): string {
  return new Walker(PLAIN_TEXT_DIALECT).inline(tokens);
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

/** Code points, so an emoji or a CJK character counts once (close enough for a monospace column). */
function displayWidth(text: string): number {
  return [...text].length;
}

/**
 * The opening line (fence and info string) of a fenced code block that `markdown` leaves open at
 * its end, else `undefined`: a split cut the block, and the next part must reopen it.
 */
export function openCodeFence(markdown: string): string | undefined {
  const last = lexMarkdown(markdown)
    .filter((token) => token.type !== 'space')
    .at(-1);
  if (last?.type !== 'code') return undefined;
  const opening = /^ {0,3}(`{3,}|~{3,})[^\n]*/.exec(last.raw);
  if (!opening) return undefined;
  const fence = opening[1] as string;
  const lines = last.raw.replace(/\n+$/, '').split('\n');
  const closing = lines.length > 1 ? (lines.at(-1) ?? '').trim() : '';
  const isClosed = closing.length >= fence.length && closing === (fence[0] as string).repeat(closing.length);
  return isClosed ? undefined : opening[0].trimStart();
}

/**
 * Renders the parts of one split reply, in order, each on its own: a part that continues the one
 * before it and starts inside a code block that part left open reopens the block (the walker
 * closes a block that is open at the end of a part), so no part shows a stray fence or code as
 * prose.
 */
export class SplitPartRenderer {
  private openFence: string | undefined;

  constructor(private readonly dialect: MarkdownDialect) {}

  /** `continuesPrevious`: this part comes right after the last one rendered, in the same reply. */
  render(part: string, continuesPrevious: boolean): string {
    const source = continuesPrevious && this.openFence !== undefined ? `${this.openFence}\n${part}` : part;
    this.openFence = openCodeFence(source);
    return renderMarkdown(source, this.dialect);
  }
}
