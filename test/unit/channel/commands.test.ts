import { describe, expect, it } from 'vitest';
import { classifyText, commandName } from '../../../src/channel/commands.js';

const COMMANDS = new Set(['bootstrap', 'goal', 'new', 'status', 'models', 'memory', 'help']);

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

describe('commandName', () => {
  it('takes the first token without its slash, lowercased', () => {
    expect(commandName('/Models list')).toBe('models');
    expect(commandName('models')).toBeUndefined();
  });
});
