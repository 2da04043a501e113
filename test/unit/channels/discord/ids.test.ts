import { describe, expect, it } from 'vitest';
import { replyReferenceFor } from '../../../../channels/discord/egress.js';
import { mentionsUser, snowflakeTimeMs, threadNameFor } from '../../../../channels/discord/ids.js';
import { withoutMentionsOf } from '../../../../channels/discord/inbound-text.js';

describe('Discord ids', () => {
  it('reads the creation time of a snowflake (Discord docs example)', () => {
    // https://discord.com/developers/docs/reference#snowflakes: 175928847299117063 → 2016-04-30T11:18:25.796Z
    expect(new Date(snowflakeTimeMs('175928847299117063')).toISOString()).toBe('2016-04-30T11:18:25.796Z');
  });

  it.each([
    ['<@100> hi', true, 'hi'],
    ['hi <@!100>', true, 'hi'],
    ['a <@100> b <@100> c', true, 'a b c'],
    ['<@1000> not us', false, '<@1000> not us'],
    ['plain', false, 'plain'],
    ['<@100>\n  - indented  twice', true, '- indented  twice'],
  ])('%s: mentioned %s, stripped %s', (content, mentioned, stripped) => {
    expect(mentionsUser(content, '100')).toBe(mentioned);
    expect(withoutMentionsOf(content, '100')).toBe(stripped);
  });

  it('names threads within 100 characters', () => {
    expect(threadNameFor('Ada', '42')).toBe('deerflow-Ada-42');
    expect(threadNameFor('x'.repeat(200), '42')).toHaveLength(100);
  });

  it('does not reference the starter message from inside its thread', () => {
    expect(replyReferenceFor('600', '600')).toBeUndefined();
    expect(replyReferenceFor('400', '600')).toBe('600');
    expect(replyReferenceFor('400', undefined)).toBeUndefined();
  });
});
