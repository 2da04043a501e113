/** The fields of a `MessageEntity` read here; anything else about an entity is ignored. */
interface EntityFields {
  type: string;
  offset: number;
  length: number;
  url?: unknown;
  user?: { first_name?: unknown; last_name?: unknown };
}

/** An entity as grammY passed it on (unchecked JSON): used only when its fields have their types. */
function asEntity(value: unknown): EntityFields | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const entity = value as Partial<EntityFields>;
  if (typeof entity.type !== 'string' || !Number.isInteger(entity.offset) || !Number.isInteger(entity.length)) return undefined;
  return entity as EntityFields;
}

/**
 * What the model reads of a Telegram message. Telegram sends the text as typed, plain UTF-16,
 * with `entities` beside it (https://core.telegram.org/bots/api#messageentity), so `<`, `&` and
 * `*` need no decoding. Three entities carry something the text alone does not say:
 *
 * - a `mention` of the bot (`@botname`) at the start addresses it: removed, with the space after;
 * - a `text_mention` (someone without a username) shows their name: it becomes `@First Last`;
 * - a `text_link` hides its target: it becomes `label (url)`, or the url when the label is it.
 *
 * Every other entity (bold, code, other mentions, urls, commands) keeps its text. Offsets are
 * UTF-16 code units, as JavaScript indexes strings. Entities that overlap one already applied,
 * fall outside the text or are malformed are ignored. Pure.
 */
export function readableText(text: string, entities: unknown, botUsername: string): string {
  const replacements: { start: number; end: number; with: string }[] = [];
  const checked = (Array.isArray(entities) ? entities : []).map(asEntity).filter((e) => e !== undefined);
  for (const entity of checked.sort((a, b) => a.offset - b.offset)) {
    const start = entity.offset;
    const end = entity.offset + entity.length;
    if (start < 0 || end > text.length || entity.length <= 0) continue;
    if (replacements.some((r) => start < r.end && end > r.start)) continue;
    const replacement = replacementFor(entity, text.slice(start, end), botUsername, text.slice(0, start));
    if (replacement === undefined) continue;
    const eaten = replacement === '' ? (/^\s*/.exec(text.slice(end))?.[0].length ?? 0) : 0;
    replacements.push({ start, end: end + eaten, with: replacement });
  }
  let out = '';
  let at = 0;
  for (const r of replacements) {
    out += text.slice(at, r.start) + r.with;
    at = r.end;
  }
  return out + text.slice(at);
}

/** What replaces the entity's `label`, or `undefined` to keep it as written. */
function replacementFor(entity: EntityFields, label: string, botUsername: string, before: string): string | undefined {
  switch (entity.type) {
    case 'mention':
      return before.trim() === '' && label.toLowerCase() === `@${botUsername.toLowerCase()}` ? '' : undefined;
    case 'text_mention': {
      const name = [entity.user?.first_name, entity.user?.last_name].filter((part) => typeof part === 'string' && part !== '').join(' ');
      return `@${name || label.replace(/^@/, '')}`;
    }
    case 'text_link':
      if (typeof entity.url !== 'string' || entity.url === '') return undefined;
      return label === entity.url ? entity.url : `${label} (${entity.url})`;
    default:
      return undefined;
  }
}
