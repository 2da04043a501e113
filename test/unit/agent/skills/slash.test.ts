import { describe, expect, it } from 'vitest';
import type { Skill } from '../../../../src/agent/skills/registry.js';
import { parseSlashSkill, RESERVED_COMMAND_NAMES, resolveSlashSkill } from '../../../../src/agent/skills/slash.js';

describe('parseSlashSkill', () => {
  it.each([
    ['/data-analysis sum it', { name: 'data-analysis', task: 'sum it' }],
    ['/data-analysis', { name: 'data-analysis', task: '' }],
    ['/data-analysis   ', { name: 'data-analysis', task: '' }],
    ['/data-analysis\nsum the\namounts ', { name: 'data-analysis', task: 'sum the\namounts' }],
    ['/pdf2 go', { name: 'pdf2', task: 'go' }],
    ['/x', { name: 'x', task: '' }],
  ])('reads %j as a skill call', (text, expected) => {
    expect(parseSlashSkill(text)).toEqual(expected);
  });

  it.each([
    [' /x task', 'leading whitespace'],
    ['hello /x', 'no slash at the start'],
    ['/etc/hosts', 'a path'],
    ['/data-analysis:now', 'no separator after the name'],
    ['/Foo task', 'an upper-case name (names are lower-case; this is chat)'],
    ['/-x', 'a leading hyphen'],
    ['/a--b', 'a double hyphen'],
    ['/', 'a bare slash'],
    ['//x', 'a double slash'],
  ])('treats %j as plain chat: %s', (text) => {
    expect(parseSlashSkill(text)).toBeUndefined();
  });

  it.each([...RESERVED_COMMAND_NAMES])('never treats the chat command /%s as a skill', (name) => {
    expect(parseSlashSkill(`/${name} task`)).toBeUndefined();
    expect(parseSlashSkill(`/${name}`)).toBeUndefined();
  });

  it('reserves the reference commands plus /start and /connect', () => {
    expect([...RESERVED_COMMAND_NAMES].sort()).toEqual(
      ['bootstrap', 'connect', 'goal', 'help', 'memory', 'models', 'new', 'start', 'status'],
    );
  });

  it('still allows skill names that merely start with a reserved word', () => {
    expect(parseSlashSkill('/news today')).toEqual({ name: 'news', task: 'today' });
  });
});

describe('resolveSlashSkill', () => {
  const skill = (name: string, isEnabled: boolean): Skill => ({
    name,
    description: `${name} skill`,
    source: 'public',
    path: `/mnt/skills/public/${name}/SKILL.md`,
    isEnabled,
  });
  const installed = new Map([
    ['on', skill('on', true)],
    ['off', skill('off', false)],
  ]);
  const registry = { get: async (name: string) => installed.get(name) };

  it.each([
    ['hello', { kind: 'none' }],
    ['/new', { kind: 'none' }],
    ['/missing do it', { kind: 'unknown', name: 'missing' }],
    ['/off do it', { kind: 'disabled', name: 'off' }],
    ['/on do it', { kind: 'active', skill: installed.get('on'), task: 'do it' }],
  ])('resolves %j', async (text, expected) => {
    expect(await resolveSlashSkill(text, registry)).toEqual(expected);
  });

  it('lets a storage failure reach the caller', async () => {
    const failing = { get: async () => Promise.reject(new Error('database unreachable')) };
    await expect(resolveSlashSkill('/on x', failing)).rejects.toThrow('database unreachable');
  });
});
