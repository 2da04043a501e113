import { describe, expect, it } from 'vitest';
import { buildSandboxEnv, SANDBOX_PATH } from '../../../../src/agent/sandbox/environment.js';

/** A server environment as operators really have it: secrets under names no deny-list guesses. */
const serverEnv = {
  PATH: '/root/.nvm/versions/node/v20/bin:/usr/bin:/bin',
  HOME: '/root',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TZ: 'Europe/Berlin',
  TERM: 'xterm',
  OPENAI_API_KEY: 'sk-leak',
  DATABASE_URL: 'postgres://app:leak@db/app',
  BOT_CREDS: 'leak',
  DEERFLOW_ADMIN_TOKEN: 'leak',
  TELEGRAM_BOT: '123:leak',
  GITHUB_APP_PEM: '-----BEGIN leak',
  DOCS_URL: 'https://example.com',
  UNSET: undefined,
};

describe('buildSandboxEnv', () => {
  it('passes only the allow-listed names, whatever the others are called', () => {
    const env = buildSandboxEnv({ baseEnv: serverEnv, homeDir: '/ws', perCallEnv: {}, isIsolated: false });
    expect(env).toEqual({ PATH: serverEnv.PATH, HOME: '/ws', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TZ: 'Europe/Berlin', TERM: 'xterm' });
    expect(JSON.stringify(env)).not.toContain('leak');
  });

  it("uses a fixed system PATH inside the sandbox, never the server's", () => {
    const env = buildSandboxEnv({ baseEnv: serverEnv, homeDir: '/mnt/user-data/workspace', perCallEnv: {}, isIsolated: true });
    expect(env.PATH).toBe(SANDBOX_PATH);
    expect(env.HOME).toBe('/mnt/user-data/workspace');
  });

  it('adds what the run puts there on purpose, on top', () => {
    const env = buildSandboxEnv({ baseEnv: {}, homeDir: '/ws', perCallEnv: { GH_TOKEN: 'per-call', HOME: '/elsewhere' }, isIsolated: true });
    expect(env).toEqual({ PATH: SANDBOX_PATH, HOME: '/elsewhere', GH_TOKEN: 'per-call' });
  });

  it('still gives an unsandboxed shell a PATH when the server has none', () => {
    expect(buildSandboxEnv({ baseEnv: {}, homeDir: '/ws', perCallEnv: {}, isIsolated: false }).PATH).toBe(SANDBOX_PATH);
  });

  it('lets through the names the operator lists in sandbox.pass_env, and only those', () => {
    const env = buildSandboxEnv({ baseEnv: { ...serverEnv, HTTPS_PROXY: 'http://proxy:3128' }, homeDir: '/ws', perCallEnv: {}, isIsolated: true, passNames: ['HTTPS_PROXY', 'MISSING'] });
    expect(env.HTTPS_PROXY).toBe('http://proxy:3128');
    expect(Object.keys(env)).not.toContain('MISSING');
    expect(JSON.stringify(env)).not.toContain('leak');
  });
});
