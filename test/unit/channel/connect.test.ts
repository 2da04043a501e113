import { describe, expect, it } from 'vitest';
import { parseConnectCommand } from '../../../src/channel/connect.js';

describe('parseConnectCommand (reference §5.3)', () => {
  it.each([
    ['/connect AbC123', 'AbC123'],
    ['/CONNECT AbC123 please', 'AbC123'],
    ['<@U123> /connect code-1', 'code-1'],
    ['@deerflow @other /connect code-2 trailing words', 'code-2'],
    ['  /connect   spaced  ', 'spaced'],
  ])('%j → %j', (text, code) => {
    expect(parseConnectCommand(text)).toBe(code);
  });

  it.each(['/connect', 'connect abc', 'hello /connect abc', '@ /connect abc', '/connected abc', ''])('%j is not a connect command', (text) => {
    expect(parseConnectCommand(text)).toBeUndefined();
  });
});
