import { Lexer, type Token, type Tokens } from 'marked';

/**
 * What a person sees of a bot message in the fake workspace, reduced to the canonical form of
 * `test/contract/round-trip.ts`. Written from Slack's published rules, independently of the
 * adapter's renderer, so it can referee it:
 * - `text` of chat.postMessage / chat.update is mrkdwn
 *   (https://docs.slack.dev/messaging/formatting-message-text);
 * - `markdown_text` of chat.startStream / appendStream / stopStream is standard Markdown, as the
 *   markdown block renders it (https://docs.slack.dev/reference/block-kit/blocks/markdown-block).
 */

export type SlackTextFormat = 'mrkdwn' | 'markdown';

export interface SlackDisplay {
  /** The visible text (canonical form). */
  shown: string;
  /** Native links, in order: the label as shown and the target. */
  links: { text: string; url: string }[];
}

/** Display names for `<@U…>` mentions without a label; unknown ids show as `@U…`. */
export type UserNameOf = (userId: string) => string | undefined;

export function displayText(text: string, format: SlackTextFormat, nameOf: UserNameOf = () => undefined): SlackDisplay {
  return format === 'mrkdwn' ? displayMrkdwn(text, nameOf) : displayMarkdown(text);
}

// ---- mrkdwn ------------------------------------------------------------------------------------

/**
 * "Slack uses &, <, and > as control characters for special parsing": `&amp;`, `&lt;`, `&gt;`
 * are the only entities decoded; "only the specific characters shown above will be decoded for
 * display" (formatting-message-text, "Escaping text").
 */
function decodeSlackEntities(text: string): string {
  return text.replace(/&(amp|lt|gt);/g, (_match, name: string) => (name === 'amp' ? '&' : name === 'lt' ? '<' : '>'));
}

const FORMAT_MARKERS = new Set(['*', '_', '~']);
const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * mrkdwn as Slack draws it. Code blocks (```…```, the text right after the opening backticks is
 * code: mrkdwn has no language tag) show their lines; `<…>` is always a control sequence (a link,
 * `<@U…>` user, `<#C…>` channel, `<!here>`-style special mention); `*bold*`, `_italic_`,
 * `~strike~` and `` `code` `` show their inner text; a line starting with `>` is a quote, shown
 * as `> ` and its text.
 *
 * Undocumented (Slack's observed parser, which the formatting page only shows by example):
 * a marker opens only at the start of a line or after a character that is not a letter or digit,
 * and before a non-space; it closes before the end of the line or a character that is not a
 * letter or digit, after a non-space. So `snake_case_name`, `a * b` and `~tilde~ver` stay
 * literal, and emphasis inside CJK text without spaces does not render. Formatting does not cross
 * a line break. A newline right after an opening fence or right before the closing one is not
 * part of the code.
 */
export function displayMrkdwn(text: string, nameOf: UserNameOf = () => undefined): SlackDisplay {
  const links: SlackDisplay['links'] = [];
  let shown = '';
  let last = 0;
  for (const fence of text.matchAll(/```([\s\S]*?)```/g)) {
    shown += proseOf(text.slice(last, fence.index), nameOf, links);
    const code = (fence[1] ?? '').replace(/^\n/, '').replace(/\n$/, '');
    shown += inlineOf(code, nameOf, links, false);
    last = fence.index + fence[0].length;
  }
  shown += proseOf(text.slice(last), nameOf, links);
  return { shown, links };
}

function proseOf(text: string, nameOf: UserNameOf, links: SlackDisplay['links']): string {
  return text
    .split('\n')
    .map((line) => {
      const quote = /^>\s?/.exec(line);
      return quote ? `> ${inlineOf(line.slice(quote[0].length), nameOf, links, true)}` : inlineOf(line, nameOf, links, true);
    })
    .join('\n');
}

/** One line (or a code block, with `isFormatted` false: control sequences only). */
function inlineOf(line: string, nameOf: UserNameOf, links: SlackDisplay['links'], isFormatted: boolean): string {
  let shown = '';
  let literal = '';
  const flush = () => {
    shown += decodeSlackEntities(literal);
    literal = '';
  };
  for (let i = 0; i < line.length; i++) {
    const char = line[i] as string;
    if (char === '<') {
      const end = line.indexOf('>', i + 1);
      if (end > i) {
        flush();
        shown += controlSequence(line.slice(i + 1, end), nameOf, links);
        i = end;
        continue;
      }
    }
    if (isFormatted && char === '`') {
      const end = line.indexOf('`', i + 1);
      if (end > i + 1) {
        flush();
        shown += inlineOf(line.slice(i + 1, end), nameOf, links, false);
        i = end;
        continue;
      }
    }
    if (isFormatted && FORMAT_MARKERS.has(char) && opensAt(line, i)) {
      const end = closerOf(line, i);
      if (end !== undefined) {
        flush();
        shown += inlineOf(line.slice(i + 1, end), nameOf, links, true);
        i = end;
        continue;
      }
    }
    literal += char;
  }
  flush();
  return shown;
}

function isBoundary(char: string | undefined): boolean {
  return char === undefined || !WORD_CHAR.test(char);
}

function opensAt(line: string, at: number): boolean {
  const next = line[at + 1];
  return isBoundary(line[at - 1]) && line[at - 1] !== line[at] && next !== undefined && !/\s/.test(next) && next !== line[at];
}

function closerOf(line: string, opener: number): number | undefined {
  const marker = line[opener];
  for (let at = line.indexOf(marker as string, opener + 2); at !== -1; at = line.indexOf(marker as string, at + 1)) {
    if (!/\s/.test(line[at - 1] as string) && isBoundary(line[at + 1]) && line[at + 1] !== marker) return at;
  }
  return undefined;
}

/** `<…>` (formatting-message-text, "Linking to URLs", "Mentioning users", "Mentioning channels", special mentions). */
function controlSequence(inner: string, nameOf: UserNameOf, links: SlackDisplay['links']): string {
  const bar = inner.indexOf('|');
  const target = bar === -1 ? inner : inner.slice(0, bar);
  const label = bar === -1 ? undefined : inner.slice(bar + 1);
  if (target.startsWith('@')) return label !== undefined && label !== '' ? `@${decodeSlackEntities(label)}` : `@${nameOf(target.slice(1)) ?? target.slice(1)}`;
  if (target.startsWith('#')) return `#${label !== undefined && label !== '' ? decodeSlackEntities(label) : target.slice(1)}`;
  if (target.startsWith('!')) {
    const special = target.slice(1);
    if (label !== undefined) return decodeSlackEntities(label);
    return ['here', 'channel', 'everyone'].includes(special) ? `@${special}` : `<${special}>`;
  }
  const shownLabel = label === undefined ? decodeSlackEntities(target) : inlineOf(label, () => undefined, [], true);
  links.push({ text: shownLabel, url: decodeSlackEntities(target) });
  return shownLabel;
}

// ---- markdown_text -----------------------------------------------------------------------------

/**
 * Standard Markdown as Slack renders the markdown block: bold, italic, strike-through, links,
 * lists, headers (bold), inline code, quotes, code blocks, images as link text, and backslash
 * escapes ("Escaping special characters: `\*This is special text\*`"). Not supported there:
 * "code block with syntax highlighting, horizontal lines, tables, and task list": a table or a rule
 * shows as its raw lines, a fence's language is dropped. Lists show as the canonical `• ` /
 * `1. ` lines.
 *
 * Undocumented: what Slack does with raw HTML. The fake hides it, so a renderer that leaves `<`
 * unescaped loses text here and is caught. Character references are decoded as CommonMark
 * says (only the common ones are modelled: `&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`, `&nbsp;`,
 * numeric).
 */
export function displayMarkdown(markdown: string): SlackDisplay {
  const links: SlackDisplay['links'] = [];
  return { shown: markdownBlocks(new Lexer({ gfm: true }).lex(markdown), 0, links), links };
}

const NAMED_REFERENCES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeReferences(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]+);/gi, (match, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
    return NAMED_REFERENCES[name] ?? match;
  });
}

function markdownBlocks(tokens: Token[], depth: number, links: SlackDisplay['links']): string {
  let shown = '';
  let isAfterBlank = false;
  for (const token of tokens) {
    if (token.type === 'space') {
      isAfterBlank = shown !== '';
      continue;
    }
    const block = markdownBlock(token, depth, links);
    if (block === undefined) continue;
    if (shown !== '') shown += isAfterBlank ? '\n\n' : '\n';
    shown += block;
    isAfterBlank = false;
  }
  return shown;
}

function markdownBlock(token: Token, depth: number, links: SlackDisplay['links']): string | undefined {
  switch (token.type) {
    case 'paragraph':
    case 'heading':
      return markdownInline((token as Tokens.Paragraph).tokens, links).replace(/\n+$/, '');
    case 'text': {
      const text = token as Tokens.Text;
      return text.tokens ? markdownInline(text.tokens, links).replace(/\n+$/, '') : decodeReferences(text.text);
    }
    case 'code':
      return (token as Tokens.Code).text;
    case 'blockquote':
      return markdownBlocks((token as Tokens.Blockquote).tokens, depth, links)
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    case 'list': {
      const list = token as Tokens.List;
      const start = typeof list.start === 'number' ? list.start : 1;
      return list.items
        .map((item, index) => {
          const marker = `${'  '.repeat(depth)}${list.ordered ? `${start + index}. ` : '• '}`;
          const [first, ...rest] = item.tokens;
          const isLead = first !== undefined && (first.type === 'text' || first.type === 'paragraph');
          const line = marker + (isLead ? (markdownBlock(first, depth, links) ?? '') : '');
          const nested = markdownBlocks(isLead ? rest : item.tokens, depth + 1, links);
          return nested === '' ? line : `${line}\n${nested}`;
        })
        .join('\n');
    }
    case 'def':
      return undefined;
    case 'html':
      return '';
    default:
      // Tables, rules and anything else Slack does not render show as typed.
      return token.raw.replace(/\n+$/, '');
  }
}

function markdownInline(tokens: Token[] | undefined, links: SlackDisplay['links']): string {
  return (tokens ?? [])
    .map((token) => {
      switch (token.type) {
        case 'text': {
          const text = token as Tokens.Text;
          return text.tokens ? markdownInline(text.tokens, links) : decodeReferences(text.text);
        }
        case 'escape':
          return (token as Tokens.Escape).text;
        case 'strong':
        case 'em':
        case 'del':
          return markdownInline((token as Tokens.Strong).tokens, links);
        case 'codespan':
          return (token as Tokens.Codespan).text;
        case 'link':
        case 'image': {
          const link = token as Tokens.Link;
          const label = token.type === 'image' ? link.text : markdownInline(link.tokens, links);
          links.push({ text: label, url: decodeReferences(link.href) });
          return label;
        }
        case 'br':
          return '\n';
        case 'html':
          return '';
        default:
          return token.raw;
      }
    })
    .join('');
}
