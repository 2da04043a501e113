/**
 * A person's message `content` → the text the model reads (issue #20), pure. Discord sends
 * `content` as typed, except that the client writes what autocomplete inserted as tokens
 * (https://discord.com/developers/docs/reference#message-formatting): those become what the
 * person saw. Everything else stays: Discord's markup is Markdown (`**b**`, `` `code` ``,
 * `> quote`), which the model reads as the person meant it, and so is a backslash the person
 * typed to escape it (`\*` means a literal `*` in both), so the backslash is kept.
 *
 * - `<@id>` / `<@!id>` of the bot: removed (it only addressed the bot); of anyone else:
 *   `@username`, from the users the event's `mentions` carries (`@user` if it does not).
 * - `<@&id>`: `@role name` from the server's roles (`@role` when unknown).
 * - `<#id>`: `#channel-name` from the channels discord.js has (`#channel` when unknown).
 * - `</name:id>` (a slash command): `/name`. `<:name:id>` / `<a:name:id>` (custom emoji): `:name:`.
 * - `<t:seconds:style>`: the moment in UTC, `2023-11-14 22:13:20 UTC`, whatever the style
 *   (`R` shows "3 hours ago" to each reader, which the model cannot know the now of).
 * - Inside code (`` ` `` spans, ``` blocks) and after a backslash nothing is decoded, since
 *   Discord shows those characters as typed.
 */

/** Names the gateway event (or discord.js's cache) carries for the ids in a message. */
export interface MentionNames {
  /** User id → username. */
  users: ReadonlyMap<string, string>;
  /** Role id → name. */
  roles: ReadonlyMap<string, string>;
  /** Channel id → name. */
  channels: ReadonlyMap<string, string>;
}

/** Left to right, first match wins: an escape or code keeps a token that follows it as typed. */
const TOKEN =
  /(\\[^0-9A-Za-z\s])|(```[\s\S]*?```)|((`+)[\s\S]*?[^`]\4(?!`))|<(@!?|@&|#)(\d{1,20})>|<\/([-_\p{L}\p{N} ]{1,100}):\d{1,20}>|<a?:(\w{1,32}):\d{1,20}>|<t:(-?\d{1,13})(?::[tTdDfFR])?>/gu;

/** The text the model reads for `content` (see the module comment). */
export function readableText(content: string, botUserId: string, names: MentionNames): string {
  return withoutMentionsOf(content, botUserId).replace(TOKEN, (token, escaped, block, span, _fence, kind, id, command, emoji, seconds) => {
    if (escaped !== undefined || block !== undefined || span !== undefined) return token;
    if (kind === '#') return `#${names.channels.get(id) ?? 'channel'}`;
    if (kind === '@&') return `@${names.roles.get(id) ?? 'role'}`;
    if (kind !== undefined) return `@${names.users.get(id) ?? 'user'}`;
    if (command !== undefined) return `/${command}`;
    if (emoji !== undefined) return `:${emoji}:`;
    return readableTime(Number(seconds)) ?? token;
  });
}

/**
 * Removes every mention of `userId` with the space it leaves (one space stays between two
 * words), and then the whitespace at either end; a message without one stays as typed.
 */
export function withoutMentionsOf(content: string, userId: string): string {
  const pattern = new RegExp(`( ?)<@!?${userId}>( ?)`, 'g');
  if (!pattern.test(content)) return content;
  const bothOrNeither = (before: string, after: string) => (before === '') === (after === '');
  return content.replace(pattern, (_match, before: string, after: string) => (bothOrNeither(before, after) ? ' ' : '')).trim();
}

/** `2023-11-14 22:13:20 UTC`, or undefined for a time JavaScript cannot hold. */
function readableTime(seconds: number): string | undefined {
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) return undefined;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
