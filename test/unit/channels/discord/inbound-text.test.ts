import { describe, expect, it } from 'vitest';
import { readableText } from '../../../../channels/discord/inbound-text.js';

const BOT = '1000000000000000001';

/** What a `MESSAGE_CREATE` carries besides `content`: its `mentions` users, the server's roles, discord.js's channels. */
const names = {
  users: new Map([
    [BOT, 'deerflow-bot'],
    ['80351110224678912', 'nelly'],
  ]),
  roles: new Map([['165511591545143296', 'moderators']]),
  channels: new Map([['103735883630395392', 'general']]),
};

describe('readableText (what the model reads of a Discord message)', () => {
  // `content` as Discord's client sends it (https://discord.com/developers/docs/reference#message-formatting).
  it.each([
    ['the bot addressed first', `<@${BOT}> what is new?`, 'what is new?'],
    ['the bot by its nickname form, mid-sentence', `so <@!${BOT}> what now`, 'so what now'],
    ['someone else mentioned', `<@${BOT}> ask <@80351110224678912> or <@!80351110224678912>`, 'ask @nelly or @nelly'],
    ['a user the event does not name', 'ping <@42>', 'ping @user'],
    ['a role', 'for <@&165511591545143296> and <@&9>', 'for @moderators and @role'],
    ['a channel', 'see <#103735883630395392> and <#9>', 'see #general and #channel'],
    ['a slash command', 'try </airhorn:816437322781949972> or </memory show:1>', 'try /airhorn or /memory show'],
    ['custom emoji, still and animated', 'nice <:mmLol:216154654256398347> <a:b1nzy:392938283556143104>', 'nice :mmLol: :b1nzy:'],
    ['a relative timestamp', 'due <t:1700000000:R>', 'due 2023-11-14 22:13:20 UTC'],
    ['a timestamp without a style', 'at <t:1618953630>', 'at 2021-04-20 21:20:30 UTC'],
    ['everyone, as typed', '@everyone look', '@everyone look'],
    ['a mention in inline code', 'write `<@80351110224678912>` to ping', 'write `<@80351110224678912>` to ping'],
    ['a mention in a code block', '```\n<#103735883630395392>\n```', '```\n<#103735883630395392>\n```'],
    ['an escaped mention', '\\<@80351110224678912> is how', '\\<@80351110224678912> is how'],
    ['markdown escapes typed by the person, kept', '\\*not bold\\* and \\_not italic\\_', '\\*not bold\\* and \\_not italic\\_'],
    ['markdown the person wrote', '**bold** > x & <b>y</b>', '**bold** > x & <b>y</b>'],
    ['spacing as typed', '- a\n  - b    c', '- a\n  - b    c'],
    ['spaces at the ends, without a mention', ' so ', ' so '],
  ])('%s', (_name, content, expected) => {
    expect(readableText(content, BOT, names)).toBe(expected);
  });
});
