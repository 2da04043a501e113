import { describe, expect, it } from 'vitest';
import { displayOf, pingsOf } from '../../fakes/discord/display.js';

/** The fake Discord's display model (the referee of the round-trip cases), on examples from Discord's own docs. */

const directory = {
  users: new Map([['80351110224678912', { id: '80351110224678912', username: 'nelly' }]]),
  roles: new Map([['165511591545143296', 'moderators']]),
  channels: new Map([['103735883630395392', 'general']]),
};

const shown = (content: string) => displayOf(content, directory).shown;

describe('the fake Discord display model', () => {
  // https://support.discord.com/hc/en-us/articles/210298617 (Markdown Text 101)
  it.each([
    ['*italics*', 'italics'],
    ['_italics_', 'italics'],
    ['**bold**', 'bold'],
    ['***bold italics***', 'bold italics'],
    ['__underline__', 'underline'],
    ['__*underline italics*__', 'underline italics'],
    ['~~Strikethrough~~', 'Strikethrough'],
    ['||spoiler||', 'spoiler'],
    ['`inline code`', 'inline code'],
    ['`` `backticks` ``', '`backticks`'],
    ['```\nblock code\n```', 'block code'],
    ['```py\nprint("hi")\n```', 'print("hi")'],
    ['```no language```', 'no language'],
    ['# Big Header', 'Big Header'],
    ['### Smaller Header', 'Smaller Header'],
    ['#### not a header', '#### not a header'],
    ['-# subtext', 'subtext'],
    ['> quoted\nnot quoted', 'quoted\nnot quoted'],
    ['>>> all\nof this', 'all\nof this'],
    ['>no space, no quote', '>no space, no quote'],
    ['- one\n* two', '• one\n• two'],
    ['- fruit\n  - apple\n- veg', '• fruit\n  • apple\n• veg'],
    ['1. one\n1. two\n7. three', '1. one\n2. two\n3. three'],
    ['3. from three\n4. on', '3. from three\n4. on'],
    ['-5 degrees', '-5 degrees'],
    ['\\*\\*Not Bold\\*\\*', '**Not Bold**'],
    ['\\_\\_not underlined\\_\\_ \\# \\> \\< \\\\', '__not underlined__ # > < \\'],
    ['a backslash before a letter stays: C:\\path', 'a backslash before a letter stays: C:\\path'],
    ['snake_case_name', 'snake_case_name'],
    ['a * b = c, x | y, 5 > 3 < 4, the ` key, ~tilde~ver', 'a * b = c, x | y, 5 > 3 < 4, the ` key, ~tilde~ver'],
    ['<b>html</b> &amp; &lt;', '<b>html</b> &amp; &lt;'],
    ['`**not bold** <@80351110224678912>` in code', '**not bold** <@80351110224678912> in code'],
  ])('%j shows %j', (content, expected) => {
    expect(shown(content)).toBe(expected);
  });

  // https://discord.com/developers/docs/reference#message-formatting (its examples' ids)
  it.each([
    ['<@80351110224678912>', '@nelly'],
    ['<@!80351110224678912>', '@nelly'],
    ['<@&165511591545143296>', '@moderators'],
    ['<#103735883630395392>', '#general'],
    ['</airhorn:816437322781949972>', '/airhorn'],
    ['<:mmLol:216154654256398347>', ':mmLol:'],
    ['<a:b1nzy:392938283556143104>', ':b1nzy:'],
    ['<t:1618953630:d>', '2021-04-20T21:20:30.000Z'],
    ['\\<@80351110224678912>', '<@80351110224678912>'],
  ])('%j shows %j', (content, expected) => {
    expect(shown(content)).toBe(expected);
  });

  it('shows a masked link by its label and an angle-bracket link by its address, carrying both', () => {
    const display = displayOf('read [the **docs**](<https://example.com/a_b?x=1&y=2>) and <https://discord.com>', directory);
    expect(display.shown).toBe('read the docs and https://discord.com');
    expect(display.links).toEqual([
      { text: 'the docs', url: 'https://example.com/a_b?x=1&y=2' },
      { text: 'https://discord.com', url: 'https://discord.com' },
    ]);
  });

  it('links a bare address without reading its underscores as emphasis', () => {
    expect(displayOf('see https://example.com/a_b_c.', directory)).toEqual({
      shown: 'see https://example.com/a_b_c.',
      links: [{ text: 'https://example.com/a_b_c', url: 'https://example.com/a_b_c' }],
    });
  });

  // https://discord.com/developers/docs/resources/message#allowed-mentions-object
  it('notifies as allowed_mentions says', () => {
    const content = '@everyone <@80351110224678912> <@&165511591545143296>';
    expect(pingsOf(content, undefined, true)).toEqual({ users: ['80351110224678912'], roles: ['165511591545143296'], everyone: true, repliedUser: true });
    expect(pingsOf(content, { parse: [] }, true)).toEqual({ users: [], roles: [], everyone: false, repliedUser: false });
    expect(pingsOf(content, { parse: ['users'], replied_user: true }, true)).toEqual({
      users: ['80351110224678912'],
      roles: [],
      everyone: false,
      repliedUser: true,
    });
  });
});
