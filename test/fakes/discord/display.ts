/**
 * What Discord's client shows for a message's `content`: the fake's display model, the referee
 * the adapter's renderer is checked against (it never calls the adapter). Written from
 * Discord's published rules:
 * - "Markdown Text 101" (https://support.discord.com/hc/en-us/articles/210298617): `*i*` /
 *   `_i_`, `**b**`, `__u__`, `~~s~~`, `||spoiler||`, headers `#` `##` `###` and subtext `-#`
 *   at a line's start, masked links `[text](url)`, lists `-` / `*` / `1.` (nested by
 *   indenting), quotes `> ` (one line) and `>>> ` (the rest), `` `code` `` and ``` fences; a
 *   backslash before a markdown character shows the character and hides the backslash.
 * - "Message Formatting" (https://discord.com/developers/docs/reference#message-formatting):
 *   `<@id>` / `<@!id>` users, `<@&id>` roles, `<#id>` channels, `</name:id>` commands,
 *   `<:name:id>` / `<a:name:id>` custom emoji, `<t:seconds:style>` timestamps; `<url>` is a
 *   link without an embed.
 * Where the article is silent (word boundaries of `_`, a fence's language tag, how inline code
 * trims its padding), Discord follows the rule set of its parser, simple-markdown, whose rule
 * order this copies: rules are tried at each position; the first that matches wins.
 *
 * `shown` is the canonical form of `test/contract/round-trip.ts`: styles show their inner text,
 * a code block its lines, a link its label, a list item `• item` / `1. item` indented two spaces
 * per level; a heading, subtext or quote shows its text; a mention the name the client shows.
 * Line breaks are kept: Discord shows a message's newlines as written.
 */

import type { FakeUser } from './store.js';

/** The names the client resolves mentions with: what it has cached of the server. */
export interface DisplayDirectory {
  users: ReadonlyMap<string, FakeUser>;
  /** Role id → name. */
  roles: ReadonlyMap<string, string>;
  /** Channel id → name. */
  channels: ReadonlyMap<string, string>;
}

export interface DisplayedLink {
  text: string;
  url: string;
}

export interface DiscordDisplay {
  shown: string;
  links: DisplayedLink[];
}

/** What the client shows for `content` (see the module comment). */
export function displayOf(content: string, directory: DisplayDirectory): DiscordDisplay {
  const parser = new DisplayParser(directory);
  const shown = parser.parse(content, { isBlockLevel: true });
  return { shown, links: parser.links };
}

// Sticky: each is tried at one position. The help article's syntax; where it is silent, simple-markdown's.
const CODE_BLOCK = /```(?:([a-z0-9_+\-.#]+?)\n)?\n*([^\n][\s\S]*?)\n*```/iy;
const QUOTE_REST = / *>>> +/y;
const QUOTE_LINE = / *> +/y;
const HEADING = /#{1,3} +(?=\S)/y;
const SUBTEXT = /-# +(?=\S)/y;
const LIST_ITEM = /( *)(?:([*-])|(\d{1,9})\.) +(?=\S)/y;
const ESCAPE = /\\([^0-9A-Za-z\s])/y;
const USER_MENTION = /<@!?(\d+)>/y;
const ROLE_MENTION = /<@&(\d+)>/y;
const CHANNEL_MENTION = /<#(\d+)>/y;
const COMMAND_MENTION = /<\/([-_\p{L}\p{N} ]{1,100}):(\d+)>/uy;
const CUSTOM_EMOJI = /<a?:(\w{2,32}):(\d+)>/y;
const TIMESTAMP = /<t:(-?\d{1,13})(?::[tTdDfFR])?>/y;
const ANGLE_LINK = /<(https?:\/\/[^\s>]+)>/y;
const MASKED_LINK = /\[((?:\\[\s\S]|[^\\\]])+)\]\(\s*<?(https?:\/\/[^\s)>]+)>?\s*\)/y;
const BARE_URL = /https?:\/\/[^\s<]+[^<.,:;"')\]\s]/y;
const INLINE_CODE = /(`+)([\s\S]*?[^`])\1(?!`)/y;
const STRONG = /\*\*((?:\\[\s\S]|[^\\])+?)\*\*(?!\*)/y;
const UNDERLINE = /__((?:\\[\s\S]|[^\\])+?)__(?!_)/y;
const EM_STAR = /\*(?=\S)((?:\*\*|\\[\s\S]|\s+(?:\\[\s\S]|[^\s*\\]|\*\*)|[^\s*\\])+?)\*(?!\*)/y;
const EM_UNDERSCORE = /_((?:__|\\[\s\S]|[^\\_])+?)_(?![0-9A-Za-z_])/y;
const STRIKE = /~~([\s\S]+?)~~/y;
const SPOILER = /\|\|([\s\S]+?)\|\|/y;

function matchAt(pattern: RegExp, text: string, at: number): RegExpExecArray | null {
  pattern.lastIndex = at;
  return pattern.exec(text);
}

interface ListLevel {
  indent: number;
  isOrdered: boolean;
  next: number;
}

/** One message's parse: links are collected in the order they show. */
class DisplayParser {
  readonly links: DisplayedLink[] = [];
  /** Open list levels, outermost first; cleared by a line that is not a list item. */
  private lists: ListLevel[] = [];

  constructor(private readonly directory: DisplayDirectory) {}

  /**
   * `isBlockLevel`: the text starts a line and line-start rules (quotes, headers, lists) apply,
   * as in a message or a quote, not inside a style.
   */
  parse(text: string, options: { isBlockLevel: boolean }): string {
    let out = '';
    let at = 0;
    /** Set after a quote marker: the rest of its line is a line of its own (`> - item` is a list in a quote). */
    let isLineStartAfterQuote = false;
    while (at < text.length) {
      const isLineStart = options.isBlockLevel && (isLineStartAfterQuote || at === 0 || text[at - 1] === '\n');
      const isQuoted = isLineStartAfterQuote;
      isLineStartAfterQuote = false;
      const code = matchAt(CODE_BLOCK, text, at);
      if (code) {
        out += code[2];
        at += code[0].length;
        continue;
      }
      if (isLineStart) {
        const quote = isQuoted ? null : (matchAt(QUOTE_REST, text, at) ?? matchAt(QUOTE_LINE, text, at));
        if (quote) {
          // `>>>` quotes the rest of the message; its lines are plain lines inside the quote.
          at += quote[0].length;
          isLineStartAfterQuote = true;
          continue;
        }
        const marker = this.lineMarker(text, at);
        if (marker) {
          out += marker.shown;
          at += marker.length;
          continue;
        }
        if (text[at] !== '\n' || at === 0 || text[at - 1] !== '\n') this.lists = [];
      }
      const inline = this.inlineAt(text, at);
      if (inline) {
        out += inline.shown;
        at += inline.length;
        continue;
      }
      out += text[at];
      at += 1;
    }
    return out;
  }

  /** A header, subtext or list marker at a line's start: what it shows before the line's text. */
  private lineMarker(text: string, at: number): { shown: string; length: number } | undefined {
    const heading = matchAt(HEADING, text, at) ?? matchAt(SUBTEXT, text, at);
    if (heading) {
      this.lists = [];
      return { shown: '', length: heading[0].length };
    }
    const item = matchAt(LIST_ITEM, text, at);
    if (!item) return undefined;
    const indent = (item[1] ?? '').length;
    const isOrdered = item[3] !== undefined;
    const level = this.listLevel(indent, isOrdered, Number(item[3] ?? 1));
    const bullet = isOrdered ? `${level.next}. ` : '• ';
    level.next += 1;
    return { shown: `${'  '.repeat(this.lists.length - 1)}${bullet}`, length: item[0].length };
  }

  /** The list level an item indented by `indent` belongs to: deeper by two spaces or more nests. */
  private listLevel(indent: number, isOrdered: boolean, start: number): ListLevel {
    while (this.lists.length > 0 && indent < (this.lists.at(-1)?.indent ?? 0)) this.lists.pop();
    const top = this.lists.at(-1);
    if (top === undefined || indent >= top.indent + 2) {
      const level = { indent, isOrdered, next: start };
      this.lists.push(level);
      return level;
    }
    if (top.isOrdered !== isOrdered) {
      // Another kind of marker starts another list at this level.
      const level = { indent: top.indent, isOrdered, next: start };
      this.lists[this.lists.length - 1] = level;
      return level;
    }
    return top;
  }

  private inlineAt(text: string, at: number): { shown: string; length: number } | undefined {
    const escaped = matchAt(ESCAPE, text, at);
    if (escaped) return { shown: escaped[1] ?? '', length: escaped[0].length };
    const angle = this.angleAt(text, at);
    if (angle) return angle;
    const masked = matchAt(MASKED_LINK, text, at);
    if (masked) {
      const label = this.parse(masked[1] ?? '', { isBlockLevel: false });
      this.links.push({ text: label, url: masked[2] ?? '' });
      return { shown: label, length: masked[0].length };
    }
    const url = matchAt(BARE_URL, text, at);
    if (url && !/[0-9A-Za-z]/.test(text[at - 1] ?? '')) {
      this.links.push({ text: url[0], url: url[0] });
      return { shown: url[0], length: url[0].length };
    }
    const code = matchAt(INLINE_CODE, text, at);
    if (code) return { shown: trimCodePadding(code[2] ?? ''), length: code[0].length };
    for (const style of [STRONG, UNDERLINE, EM_STAR, STRIKE, SPOILER]) {
      const styled = matchAt(style, text, at);
      if (styled) return { shown: this.parse(styled[1] ?? '', { isBlockLevel: false }), length: styled[0].length };
    }
    // `_` opens emphasis only at a word's edge: `snake_case_name` stays as typed.
    const underscored = /[0-9A-Za-z_]/.test(text[at - 1] ?? '') ? null : matchAt(EM_UNDERSCORE, text, at);
    if (underscored) return { shown: this.parse(underscored[1] ?? '', { isBlockLevel: false }), length: underscored[0].length };
    return undefined;
  }

  /** Mentions, custom emoji, timestamps and `<url>`: what the client shows for each. */
  private angleAt(text: string, at: number): { shown: string; length: number } | undefined {
    if (text[at] !== '<') return undefined;
    const { users, roles, channels } = this.directory;
    const user = matchAt(USER_MENTION, text, at);
    if (user) return { shown: `@${users.get(user[1] ?? '')?.username ?? 'unknown-user'}`, length: user[0].length };
    const role = matchAt(ROLE_MENTION, text, at);
    if (role) return { shown: `@${roles.get(role[1] ?? '') ?? 'unknown-role'}`, length: role[0].length };
    const channel = matchAt(CHANNEL_MENTION, text, at);
    if (channel) return { shown: `#${channels.get(channel[1] ?? '') ?? 'unknown'}`, length: channel[0].length };
    const command = matchAt(COMMAND_MENTION, text, at);
    if (command) return { shown: `/${command[1]}`, length: command[0].length };
    const emoji = matchAt(CUSTOM_EMOJI, text, at);
    if (emoji) return { shown: `:${emoji[1]}:`, length: emoji[0].length };
    const time = matchAt(TIMESTAMP, text, at);
    if (time) return { shown: new Date(Number(time[1]) * 1000).toISOString(), length: time[0].length };
    const link = matchAt(ANGLE_LINK, text, at);
    if (link) {
      this.links.push({ text: link[1] ?? '', url: link[1] ?? '' });
      return { shown: link[1] ?? '', length: link[0].length };
    }
    return undefined;
  }
}

/** One space of padding on each side goes when the code begins or ends with a backtick (`` `` `a` `` `` shows `` `a` ``). */
function trimCodePadding(code: string): string {
  return code.replace(/^ (?= *`)/, '').replace(/(` *) $/, '$1');
}

/** Who a new message notifies (https://discord.com/developers/docs/resources/message#allowed-mentions-object). */
export interface Pings {
  users: string[];
  roles: string[];
  everyone: boolean;
  repliedUser: boolean;
}

interface AllowedMentions {
  parse?: string[];
  users?: string[];
  roles?: string[];
  replied_user?: boolean;
}

/**
 * The notifications a bot's new message sends. Without `allowed_mentions` every mention in the
 * content notifies, and so does a reply; with it, only the types in `parse` and the ids in
 * `users` / `roles` that the content mentions, and the replied-to author only with
 * `replied_user: true`.
 */
export function pingsOf(content: string, allowedMentions: unknown, isReply: boolean): Pings {
  const mentionedUsers = [...content.matchAll(/<@!?(\d+)>/g)].map((m) => m[1] ?? '');
  const mentionedRoles = [...content.matchAll(/<@&(\d+)>/g)].map((m) => m[1] ?? '');
  const mentionsEveryone = /@(?:everyone|here)/.test(content);
  if (allowedMentions === undefined || allowedMentions === null) {
    return { users: mentionedUsers, roles: mentionedRoles, everyone: mentionsEveryone, repliedUser: isReply };
  }
  const allowed = allowedMentions as AllowedMentions;
  const parse = new Set(allowed.parse ?? []);
  return {
    users: mentionedUsers.filter((id) => parse.has('users') || (allowed.users ?? []).includes(id)),
    roles: mentionedRoles.filter((id) => parse.has('roles') || (allowed.roles ?? []).includes(id)),
    everyone: mentionsEveryone && parse.has('everyone'),
    repliedUser: isReply && allowed.replied_user === true,
  };
}
