import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../../src/manager/commands/index.js';

describe('parseCommand', () => {
  it.each([
    ['/new', { name: 'new', args: '', isWellFormed: true }],
    ['/NEW  now please ', { name: 'new', args: 'now please', isWellFormed: true }],
    ['/goal ship\nit', { name: 'goal', args: 'ship\nit', isWellFormed: true }],
    [' /new', { name: 'new', args: '', isWellFormed: false }],
    ['//help', { name: '/help', args: '', isWellFormed: true }],
    ['   ', { name: undefined, args: '', isWellFormed: false }],
  ])('%j', (text, expected) => {
    expect(parseCommand(text)).toEqual(expected);
  });
});
