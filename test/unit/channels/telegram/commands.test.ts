import { describe, expect, it } from 'vitest';
import { normalizeCommand, parseStartCommand } from '../../../../channels/telegram/commands.js';

describe('normalizeCommand', () => {
  it.each<[string, string | undefined]>([
    ['/new', '/new'],
    ['/new@test_bot', '/new'],
    ['/new@Test_Bot', '/new'],
    ['/new@TEST_BOT args here', '/new args here'],
    ['/goal@test_bot\nship it', '/goal\nship it'],
    ['/new@other_bot', undefined],
    ['/new@other_bot args', undefined],
    ['/new@test_botx', undefined],
    ['hello /new@other_bot', 'hello /new@other_bot'],
    ['/etc/hosts@test_bot', '/etc/hosts@test_bot'],
    // A skill's slash name has hyphens (issue #15: the @bot stayed, so the skill never activated).
    ['/some-skill@test_bot do it', '/some-skill do it'],
    ['/data-analysis@Test_Bot', '/data-analysis'],
    ['/some-skill@other_bot do it', undefined],
    ['/-skill@test_bot', '/-skill@test_bot'],
    ['mail me at a@test_bot', 'mail me at a@test_bot'],
    ['', ''],
  ])('%j → %j', (text, expected) => {
    expect(normalizeCommand(text, 'test_bot')).toBe(expected);
  });
});

describe('parseStartCommand', () => {
  it.each<[string, string | undefined]>([
    ['/start', ''],
    ['/START', ''],
    ['/start abc123', 'abc123'],
    ['/start  code  ', 'code'],
    ['/starts', undefined],
    ['start', undefined],
    ['/new', undefined],
  ])('%j → %j', (text, args) => {
    expect(parseStartCommand(text)).toBe(args);
  });
});
