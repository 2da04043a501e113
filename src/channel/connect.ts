/**
 * `/connect <code>` as every platform but Telegram receives it (reference §5.3): leading mention
 * tokens (`<@U123>`, `@bot`) are skipped, the next token must be `/connect` (any case), and the
 * token after it is the code, case kept; anything after the code is ignored. `connect abc`
 * without the slash is ordinary chat. Returns `undefined` when the text is not a connect command.
 */
export function parseConnectCommand(text: string): string | undefined {
  const tokens = text.trim().split(/\s+/);
  let index = 0;
  while (index < tokens.length && isMentionToken(tokens[index] as string)) index++;
  if (tokens[index]?.toLowerCase() !== '/connect') return undefined;
  const code = tokens[index + 1];
  return code === undefined || code === '' ? undefined : code;
}

/** A leading mention: `<@…>` or `@name` (longer than the `@` alone). */
function isMentionToken(token: string): boolean {
  return (token.startsWith('<@') && token.endsWith('>')) || (token.startsWith('@') && token.length > 1);
}
