/**
 * A Slack message's `text` → the plain text the model reads, as the person meant it (issue #20).
 * Pure. Slack encodes what people type (https://docs.slack.dev/messaging/formatting-message-text,
 * "Escaping text" and "Retrieving messages"): `&`, `<`, `>` arrive as `&amp;`, `&lt;`, `&gt;`,
 * and everything between a raw `<` and `>` is Slack's markup:
 *
 * | Slack sends | the model reads |
 * |---|---|
 * | `&amp;` `&lt;` `&gt;` | `&` `<` `>` (no other entity: a typed `&nbsp;` stays) |
 * | `<@U123\|alice>` / `<@U123>` | `@alice` / `@<display name>` (looked up; `@U123` when unknown) |
 * | `<@UBOT>` leading the message | nothing (elsewhere: `@<bot name>`) |
 * | `<#C123\|general>` / `<#C123>` | `#general` / `#<channel name>` (looked up; `#C123` when unknown) |
 * | `<!here>` `<!channel>` `<!everyone>` | `@here` `@channel` `@everyone` |
 * | `<!subteam^S1\|@team>`, `<!date^…\|fallback>` | the label: `@team`, `fallback` |
 * | `<https://x\|label>` | `label (https://x)`; the url alone when the label is the url (with or without its scheme) |
 * | `<https://x>` | `https://x` |
 * | `<mailto:a@b\|a@b>` | `a@b`; `label (a@b)` when the label is something else |
 *
 * The event's `blocks` (rich_text) are not read: they carry the same mentions and links, but
 * the composer turns typed `*`/`_`/`~` into styles there, while `text` keeps the characters
 * the person typed, which is what the model should read.
 */

export interface InboundTextContext {
  /** Our bot's member id: its leading mention is removed. */
  botUserId: string;
  /** Our bot's name, for a mention of it anywhere but the start; default its id. */
  botName?: string;
  /** Display names of members mentioned without a label, by id (`SlackNameCache`). */
  userNames?: ReadonlyMap<string, string>;
  /** Names of channels referenced without a label, by id (`SlackNameCache`). */
  channelNames?: ReadonlyMap<string, string>;
}

const CONTROL_SEQUENCE = /<([^<>]*)>/g;
const SPECIAL_MENTIONS = new Set(['here', 'channel', 'everyone']);

/** Decodes `text` (see the module comment). */
export function decodeInboundText(text: string, context: InboundTextContext): string {
  const stripped = stripLeadingMention(text, context.botUserId);
  let decoded = '';
  let last = 0;
  for (const sequence of stripped.matchAll(CONTROL_SEQUENCE)) {
    decoded += decodeEntities(stripped.slice(last, sequence.index));
    decoded += readableSequence(sequence[1] ?? '', context);
    last = sequence.index + sequence[0].length;
  }
  return decoded + decodeEntities(stripped.slice(last));
}

/** Members mentioned by id only (`<@U123>`, not `<@U123|name>`), other than our bot: the names to look up. */
export function unlabelledMentions(text: string, botUserId: string): string[] {
  const ids = [...text.matchAll(/<@([UW][A-Z0-9]+)\|?>/g)].map((match) => match[1] as string);
  return [...new Set(ids)].filter((id) => id !== botUserId);
}

/** Channels referenced by id only (`<#C123>` or `<#C123|>`): the names to look up. */
export function unlabelledChannels(text: string): string[] {
  return [...new Set([...text.matchAll(/<#([CGD][A-Z0-9]+)\|?>/g)].map((match) => match[1] as string))];
}

/**
 * Removes our mention (`<@UBOT>`, `<@UBOT|name>`) and the whitespace, `:` or `,` after it from
 * the start of `text`; mentions of anyone else stay.
 */
export function stripLeadingMention(text: string, botUserId: string): string {
  const mention = new RegExp(`^\\s*<@${escapeRegExp(botUserId)}(?:\\|[^>]*)?>[\\s,:]*`);
  return text.replace(mention, '');
}

/** Slack decodes only these three for display; so do we. One pass: `&amp;lt;` is `&lt;`. */
function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt);/g, (_match, name: string) => (name === 'amp' ? '&' : name === 'lt' ? '<' : '>'));
}

function readableSequence(inner: string, context: InboundTextContext): string {
  const bar = inner.indexOf('|');
  const target = decodeEntities(bar === -1 ? inner : inner.slice(0, bar));
  const label = bar === -1 ? '' : decodeEntities(inner.slice(bar + 1));
  if (target.startsWith('@')) {
    const id = target.slice(1);
    if (label !== '') return `@${label}`;
    if (id === context.botUserId) return `@${context.botName ?? id}`;
    return `@${context.userNames?.get(id) ?? id}`;
  }
  if (target.startsWith('#')) {
    const id = target.slice(1);
    return `#${label === '' ? (context.channelNames?.get(id) ?? id) : label}`;
  }
  if (target.startsWith('!')) {
    if (label !== '') return label;
    const special = target.slice(1);
    return SPECIAL_MENTIONS.has(special) ? `@${special}` : `@${special.split('^')[0]}`;
  }
  if (target.startsWith('mailto:')) {
    const address = target.slice('mailto:'.length);
    return label === '' || label === address ? address : `${label} (${address})`;
  }
  if (label === '' || label === target) return target;
  // Slack links a typed `example.com` as `<http://example.com|example.com>`: the person typed the label.
  if (label === target.replace(/^https?:\/\//, '')) return label;
  return `${label} (${target})`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
