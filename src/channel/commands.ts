import type { InboundKind } from './types.js';

/**
 * Command or chat, the same way on every platform (reference §1.1): only the command names core
 * knows count, so `/some-skill task`, unknown slash words and paths like `/etc/hosts` stay chat.
 * Platforms strip their own addressing first (Telegram `/cmd@bot`, leading mentions elsewhere).
 */

/** The first whitespace-delimited token without its `/`, lowercased; `undefined` if not a slash word. */
export function commandName(text: string): string | undefined {
  if (!text.startsWith('/')) return undefined;
  const token = text.split(/\s/, 1)[0] ?? '';
  return token.slice(1).toLowerCase();
}

/**
 * `command` when the text starts (no leading whitespace) with a slash word in `commandNames`;
 * everything else is `chat`.
 */
export function classifyText(text: string, commandNames: ReadonlySet<string>): InboundKind {
  const name = commandName(text);
  return name !== undefined && commandNames.has(name) ? 'command' : 'chat';
}
