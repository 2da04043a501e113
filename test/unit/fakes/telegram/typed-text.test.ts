import { describe, expect, it } from 'vitest';
import { detectedEntities } from '../../../fakes/telegram/typed-text.js';

/** Entity types as https://core.telegram.org/bots/api#messageentity lists them, found the way Telegram's server finds them. */
describe('the entities the fake Telegram finds in what a person types', () => {
  it('finds a leading command, mentions and urls, and nothing in markup characters', () => {
    const text = '/new@test_bot ask @alice_w about https://example.com/a_b?x=1&y=2. 1 < 2 && *b*';
    expect(detectedEntities(text)).toEqual([
      { type: 'bot_command', offset: 0, length: 13 },
      { type: 'mention', offset: 18, length: 8 },
      { type: 'url', offset: 33, length: 31 },
    ]);
  });

  it('counts offsets in UTF-16 code units', () => {
    expect(detectedEntities('👍🏽 @alice_w')).toEqual([{ type: 'mention', offset: 5, length: 8 }]);
  });

  it('takes no mention from an e-mail address or a name too short for a username', () => {
    expect(detectedEntities('mail bob@example.com or @bob')).toEqual([]);
  });
});
