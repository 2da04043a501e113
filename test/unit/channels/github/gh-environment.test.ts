import { describe, expect, it } from 'vitest';
import { ghEnvironment, ghHostOf } from '../../../../channels/github/gh-environment.js';

const NO_PROMPTS = { GH_PROMPT_DISABLED: '1', GH_NO_UPDATE_NOTIFIER: '1' };

describe('ghHostOf', () => {
  it.each<[string, string | undefined]>([
    ['https://api.github.com', undefined],
    ['https://api.github.com/', undefined],
    ['https://github.com', undefined],
    ['https://ghe.example.com/api/v3', 'ghe.example.com'],
    ['https://127.0.0.1:8443/api/v3', '127.0.0.1:8443'],
    ['http://localhost:3000/api/v3', 'localhost:3000'],
    // The default port is not part of the host `gh` would be told about.
    ['https://ghe.example.com:443/api/v3', 'ghe.example.com'],
  ])('%s → %s', (apiUrl, expected) => {
    expect(ghHostOf(apiUrl)).toBe(expected);
  });
});

describe('ghEnvironment', () => {
  it('gives github.com the token as GH_TOKEN and GITHUB_TOKEN, and no host', () => {
    expect(ghEnvironment('https://api.github.com', 'ghs_abc')).toEqual({
      secrets: { GH_TOKEN: 'ghs_abc', GITHUB_TOKEN: 'ghs_abc' },
      variables: NO_PROMPTS,
    });
  });

  it('points gh at an Enterprise Server host and adds the enterprise token names', () => {
    expect(ghEnvironment('https://ghe.example.com/api/v3', 'ghs_abc')).toEqual({
      secrets: {
        GH_TOKEN: 'ghs_abc',
        GITHUB_TOKEN: 'ghs_abc',
        GH_ENTERPRISE_TOKEN: 'ghs_abc',
        GITHUB_ENTERPRISE_TOKEN: 'ghs_abc',
      },
      variables: { ...NO_PROMPTS, GH_HOST: 'ghe.example.com' },
    });
  });

  it('keeps the port in GH_HOST', () => {
    expect(ghEnvironment('https://127.0.0.1:8443/api/v3', 'ghs_abc').variables).toEqual({ ...NO_PROMPTS, GH_HOST: '127.0.0.1:8443' });
  });

  it.each<[string, Record<string, string>]>([
    ['https://api.github.com', NO_PROMPTS],
    ['https://ghe.example.com/api/v3', { ...NO_PROMPTS, GH_HOST: 'ghe.example.com' }],
  ])('without a token for %s: no secrets, the variables still', (apiUrl, variables) => {
    const environment = ghEnvironment(apiUrl, undefined);
    expect(environment).toEqual({ variables });
    expect(environment.secrets).toBeUndefined();
  });

  it('never puts the token among the plain variables', () => {
    const { variables } = ghEnvironment('https://ghe.example.com/api/v3', 'ghs_secret');
    expect(Object.values(variables ?? {})).not.toContain('ghs_secret');
  });
});
