import { Lexer, type Token, type Tokens } from 'marked';

/**
 * What a person sees of a Markdown message on a platform whose client renders a CommonMark /
 * GitHub-flavoured dialect (Feishu cards, DingTalk markdown), reduced to the canonical form of
 * test/contract/round-trip.ts. The fakes' independent referee: it reads the platform's format
 * as the platform's rules say (each fake passes its {@link DisplayRules}), never through an
 * adapter's renderer. marked is only the CommonMark parser here; what each construct shows is
 * decided below.
 */

export interface DisplayRules {
  /** GFM pipe tables are drawn as tables; otherwise their source lines show as text. */
  hasTables: boolean;
  /** `~~x~~` strikes through; otherwise the tildes show. */
  hasStrike: boolean;
  /** Backtick code spans are drawn; otherwise the backticks show. */
  hasInlineCode: boolean;
  /**
   * Code blocks are HTML to the client too: character references decode and tags are markup
   * inside them, as outside. Otherwise (CommonMark) their lines show exactly as written.
   */
  isCodeBlockHtml: boolean;
  /** `:NAME:` in text is an emoji the platform draws (shown here as `[emoji NAME]`). */
  hasEmojiShortcodes: boolean;
  /** A newline inside a paragraph: a line break (`\n`) or, as in CommonMark, a space. */
  softBreak: '\n' | ' ';
  /**
   * An HTML tag (`<b>`, `</b>`, `<at id=…>`): what it shows and whom it pings. Platforms that
   * interpret HTML treat every tag as markup, so a tag never shows its own characters.
   */
  tag(raw: string): { shown: string; mention?: string };
}

export interface Display {
  shown: string;
  links: { text: string; url: string }[];
  /** Who the message pings (ids from mention tags), in order. */
  mentions: string[];
}

/** Displays `markdown` as a platform with `rules` shows it. */
export function displayMarkdown(markdown: string, rules: DisplayRules): Display {
  const display: Display = { shown: '', links: [], mentions: [] };
  const reader = new Reader(rules, display);
  display.shown = reader.blocks(new Lexer({ gfm: true }).lex(markdown), 0).replace(/\n+$/, '');
  return display;
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/**
 * HTML character references in text, decoded once as a browser does: numeric ones and the
 * common named ones (not HTML's full table: an unknown name shows as written, which only makes
 * the referee stricter).
 */
function decodeCharacterReferences(text: string): string {
  return text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' || ref[1] === 'X' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '\ufffd';
    }
    return NAMED_ENTITIES[ref] ?? whole;
  });
}

class Reader {
  constructor(
    private readonly rules: DisplayRules,
    private readonly display: Display,
  ) {}

  blocks(tokens: Token[], depth: number): string {
    let out = '';
    let hadBlankLine = false;
    for (const token of tokens) {
      if (token.type === 'space') {
        hadBlankLine = out !== '';
        continue;
      }
      const shown = this.block(token, depth);
      if (shown === undefined) continue;
      if (out !== '') out += hadBlankLine ? '\n\n' : '\n';
      out += shown;
      hadBlankLine = false;
    }
    return out;
  }

  private block(token: Token, depth: number): string | undefined {
    switch (token.type) {
      case 'paragraph':
      case 'heading':
        return this.inline((token as Tokens.Paragraph).tokens).replace(/\n+$/, '');
      case 'text': {
        const text = token as Tokens.Text;
        return text.tokens ? this.inline(text.tokens).replace(/\n+$/, '') : this.prose(text.raw.replace(/\n+$/, ''));
      }
      case 'code': {
        const code = (token as Tokens.Code).text;
        return this.rules.isCodeBlockHtml ? this.html(code, '\n') : code;
      }
      case 'blockquote':
        return this.blocks((token as Tokens.Blockquote).tokens, depth);
      case 'list':
        return this.list(token as Tokens.List, depth);
      case 'table':
        return this.rules.hasTables ? this.table(token as Tokens.Table) : this.prose(token.raw.replace(/\n+$/, ''));
      case 'hr':
        return '———';
      case 'html':
        return this.html(token.raw.replace(/\n+$/, ''));
      case 'def':
        return undefined;
      default:
        return this.prose(token.raw);
    }
  }

  private list(list: Tokens.List, depth: number): string {
    const start = typeof list.start === 'number' ? list.start : 1;
    return list.items
      .map((item, index) => {
        const marker = list.ordered ? `${start + index}. ` : '• ';
        const [first, ...rest] = item.tokens;
        const isLead = first !== undefined && (first.type === 'text' || first.type === 'paragraph');
        const line = `${'  '.repeat(depth)}${marker}${isLead ? (this.block(first, depth) ?? '') : ''}`;
        const nested = this.blocks(isLead ? rest : item.tokens, depth + 1);
        return nested === '' ? line : `${line}\n${nested}`;
      })
      .join('\n');
  }

  /** A drawn table in the canonical monospace form: cells padded to the widest of their column. */
  private table(table: Tokens.Table): string {
    const rows = [table.header, ...table.rows].map((row) => row.map((cell) => this.inline(cell.tokens)));
    const columns = Math.max(...rows.map((row) => row.length));
    const width = (column: number) => Math.max(3, ...rows.map((row) => [...(row[column] ?? '')].length));
    const widths = Array.from({ length: columns }, (_, column) => width(column));
    const pad = (cell: string, w: number) => cell + ' '.repeat(Math.max(0, w - [...cell].length));
    const line = (row: string[]) => `| ${widths.map((w, column) => pad(row[column] ?? '', w)).join(' | ')} |`;
    const [header = [], ...body] = rows;
    return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...body.map(line)].join('\n');
  }

  private inline(tokens: Token[] | undefined): string {
    return (tokens ?? []).map((token) => this.inlineToken(token)).join('');
  }

  private inlineToken(token: Token): string {
    switch (token.type) {
      case 'text': {
        const text = token as Tokens.Text;
        return text.tokens ? this.inline(text.tokens) : this.prose(text.raw);
      }
      case 'escape':
        return (token as Tokens.Escape).text;
      case 'strong':
      case 'em':
        return this.inline((token as Tokens.Strong).tokens);
      case 'del':
        return this.rules.hasStrike ? this.inline((token as Tokens.Del).tokens) : this.prose(token.raw);
      case 'codespan':
        return this.rules.hasInlineCode ? (token as Tokens.Codespan).text : this.prose(token.raw);
      case 'link': {
        const link = token as Tokens.Link;
        const label = this.inline(link.tokens);
        this.display.links.push({ text: label, url: link.href });
        return label;
      }
      case 'image':
        return (token as Tokens.Image).text;
      case 'br':
        return '\n';
      case 'html':
        return this.html(token.raw);
      default:
        return this.prose(token.raw);
    }
  }

  /**
   * Text outside code: character references decoded, a line's leading whitespace dropped (as
   * CommonMark does in a paragraph), soft line breaks as the platform shows them.
   */
  private prose(raw: string): string {
    const lines = raw.replace(/\n[ \t]+/g, '\n');
    const drawn = this.rules.hasEmojiShortcodes ? lines.replace(/:([A-Za-z][A-Za-z0-9_]*):/g, '[emoji $1]') : lines;
    return decodeCharacterReferences(drawn).replace(/\n/g, this.rules.softBreak);
  }

  /** HTML: each tag as the platform interprets it, the text between tags as prose (newlines as `softBreak`, unless given). */
  private html(raw: string, lineBreak: string = this.rules.softBreak): string {
    return raw
      .split(/(<\/?[a-zA-Z][^>]*>)/)
      .map((part, index) => {
        if (index % 2 === 0) return decodeCharacterReferences(part).replace(/\n/g, lineBreak);
        const tag = this.rules.tag(part);
        if (tag.mention !== undefined) this.display.mentions.push(tag.mention);
        return tag.shown;
      })
      .join('');
  }
}
