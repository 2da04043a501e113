import { commandName } from '../../src/channel/commands.js';

/**
 * Telegram's `/command@BotName` addressing (https://core.telegram.org/bots/features#commands):
 * in groups a command may name the bot it is for. Command names are letters, digits or
 * underscores; a skill's name (`/data-analysis@bot task`, reference §5.2) joins such words with
 * hyphens. Anything else after `/` is not addressed and stays plain text.
 */
const ADDRESSED_COMMAND = /^\/([A-Za-z0-9_]{1,64}(?:-[A-Za-z0-9_]{1,64})*)@([A-Za-z0-9_]+)(?=\s|$)/;

/** Handled by the adapter itself, never forwarded (reference §5.3). */
export const START_COMMAND = 'start';

/**
 * Drops our own `@botUsername` from a leading command (`/new@Test_Bot args` → `/new args`,
 * compared case-insensitively). Returns `undefined` when the command names another bot, so the
 * message is not for us; any other text comes back unchanged.
 */
export function normalizeCommand(text: string, botUsername: string): string | undefined {
  const match = ADDRESSED_COMMAND.exec(text);
  if (!match) return text;
  const [token, name = '', addressee = ''] = match;
  if (addressee.toLowerCase() !== botUsername.toLowerCase()) return undefined;
  return `/${name}${text.slice(token.length)}`;
}

/** The argument of a `/start` command (`''` when bare), or `undefined` when it is not one. */
export function parseStartCommand(text: string): string | undefined {
  if (commandName(text) !== START_COMMAND) return undefined;
  return text.slice(text.split(/\s/, 1)[0]?.length ?? 0).trim();
}
