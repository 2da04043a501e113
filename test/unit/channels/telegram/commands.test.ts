import { describe, expect, it } from 'vitest';
import {
  classifyText,
  commandName,
  normalizeCommand,
  parseStartCommand,
} from '../../../../channels/telegram/commands.js';

const COMMANDS = new Set(['bootstrap', 'goal', 'new', 'status', 'models', 'memory', 'help']);

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
    ['/some-skill@other_bot do it', '/some-skill@other_bot do it'],
    ['mail me at a@test_bot', 'mail me at a@test_bot'],
    ['', ''],
  ])('%j → %j', (text, expected) => {
    expect(normalizeCommand(text, 'test_bot')).toBe(expected);
  });
});

describe('classifyText', () => {
  it.each<[string, 'chat' | 'command']>([
    ['/new', 'command'],
    ['/NEW', 'command'],
    ['/goal ship the release', 'command'],
    ['/help\nplease', 'command'],
    ['/unknown', 'chat'],
    ['/some-skill task', 'chat'],
    ['/etc/hosts', 'chat'],
    [' /new', 'chat'],
    ['//help', 'chat'],
    ['new', 'chat'],
    ['hello', 'chat'],
    ['', 'chat'],
  ])('%j → %s', (text, kind) => {
    expect(classifyText(text, COMMANDS)).toBe(kind);
  });
});

describe('commandName / parseStartCommand', () => {
  it('takes the first token without its slash, lowercased', () => {
    expect(commandName('/Models list')).toBe('models');
    expect(commandName('models')).toBeUndefined();
  });

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
