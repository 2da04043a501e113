import type { MessageEntity } from 'grammy/types';

/**
 * The entities Telegram's server finds in what a person types
 * (https://core.telegram.org/bots/api#messageentity): a `bot_command` at the start (`/new`,
 * `/new@some_bot`), `mention`s (`@username`, 5-32 characters) and `url`s. Everything else a
 * person types arrives as plain text, `<`, `&` and `*` included; formatting the sender applied in
 * their app (bold, links with a label, a mention of someone without a username) comes as
 * explicit entities, which the test passes in.
 */
const BOT_COMMAND = /^\/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{5,32})?(?=\s|$)/;
const MENTION = /(?<![\w@])@[A-Za-z][A-Za-z0-9_]{4,31}(?![\w@])/g;
const URL = /\bhttps?:\/\/[^\s<>"]+[^\s<>".,;:!?)\]]/g;

export function detectedEntities(text: string): MessageEntity[] {
  const entities: MessageEntity[] = [];
  const command = BOT_COMMAND.exec(text);
  if (command) entities.push({ type: 'bot_command', offset: 0, length: command[0].length });
  for (const match of text.matchAll(MENTION)) {
    const offset = match.index ?? 0;
    if (command && offset < command[0].length) continue;
    entities.push({ type: 'mention', offset, length: match[0].length });
  }
  for (const match of text.matchAll(URL)) entities.push({ type: 'url', offset: match.index ?? 0, length: match[0].length });
  return entities.sort((a, b) => a.offset - b.offset);
}
