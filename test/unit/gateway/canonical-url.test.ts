import { describe, expect, it } from 'vitest';
import { canonicalUrl } from '../../../src/gateway/canonical-url.js';

describe('canonicalUrl', () => {
  it.each([
    ['/api/threads/x', '/api/threads/x'],
    ['/', '/'],
    ['', '/'],
    ['http://host:8001/api/threads/x', '/api/threads/x'],
    ['HTTPS://host/api/me?x=1', '/api/me?x=1'],
    ['http://host', '/'],
    ['//api//threads///x', '/api/threads/x'],
    ['/./api/./threads/x', '/api/threads/x'],
    ['/x/../api/threads/x', '/api/threads/x'],
    ['/../../api/me', '/api/me'],
    ['/%2e/api/%2E%2e/api/me', '/api/me'],
    ['/api/threads/x/', '/api/threads/x'],
    ['/api/memory/?user_id=a/../b', '/api/memory?user_id=a/../b'],
    // Letters stay escaped for the router (it decodes them); an escaped slash stays inside its segment.
    ['/%61pi/threads/x', '/%61pi/threads/x'],
    ['/api%2Fthreads/x', '/api%2Fthreads/x'],
    ['*', '*'],
  ])('%s → %s', (target, expected) => {
    expect(canonicalUrl(target)).toBe(expected);
  });
});
