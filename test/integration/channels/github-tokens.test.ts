import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Octokit } from '@octokit/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hasWriteAccess } from '../../../channels/github/permissions.js';
import { addEyesReaction, type ReactionTarget } from '../../../channels/github/reactions.js';
import { InstallationTokens, RUN_TOKEN_PERMISSIONS, type TokenScope } from '../../../channels/github/tokens.js';
import { ChannelError, ConfigError } from '../../../src/errors.js';
import { createLogger, type Logger } from '../../../src/logger.js';
import { type AppKeyPair, FakeGitHub, generateAppKeyPair, type RepoRole, verifyAppJwt } from '../../fakes/github/index.js';

const APP_ID = 4242;
const REPO = 'Octo-Org/Hello-World';
/** The scope every mint of these tests asks for, unless a test says otherwise. */
const SCOPE: TokenScope = { repo: REPO, permissions: RUN_TOKEN_PERMISSIONS };
const WARN = 40;

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

let keys: AppKeyPair;
let fake: FakeGitHub;
let apiUrl: string;
let deadUrl: string;
let tempDir: string;
/** Every raw log line of every logger made by `captureLogs`, for the leak checks. */
const allRawLines: string[] = [];

function captureLogs(): { logger: Logger; lines: LogLine[]; warnings: () => LogLine[] } {
  const lines: LogLine[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: {
      write: (line: string) => {
        allRawLines.push(line);
        lines.push(JSON.parse(line) as LogLine);
      },
    },
  });
  return { logger, lines, warnings: () => lines.filter((line) => line.level === WARN) };
}

function tokensFor(options: { logger?: Logger; now?: () => number; timeoutMs?: number; url?: string } = {}): InstallationTokens {
  return new InstallationTokens({
    appId: APP_ID,
    privateKey: keys.privateKey,
    apiUrl: options.url ?? apiUrl,
    logger: options.logger ?? captureLogs().logger,
    ...(options.now ? { now: options.now } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  });
}

function mintCalls(installationId: number) {
  return fake.callsTo('access_tokens').filter((call) => call.path.endsWith(`/installations/${installationId}/access_tokens`));
}

/** The base64 body of the private key, minus the armour: no log line may contain a slice of it. */
function keyFragment(): string {
  return keys.privateKey.split('\n')[5] ?? '';
}

/** A freshly minted installation token, for the permission and reaction calls. */
async function installationToken(installationId: number): Promise<string> {
  const token = await tokensFor().token(installationId, SCOPE);
  if (token === undefined) throw new Error('mint failed');
  return token;
}

beforeAll(async () => {
  keys = generateAppKeyPair();
  fake = new FakeGitHub({ appId: APP_ID, publicKey: keys.publicKey, appSlug: 'deerflow-bot' });
  apiUrl = await fake.start();
  // A port nothing listens on: bind, read it, close.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  deadUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/api/v3`;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  tempDir = mkdtempSync(join(tmpdir(), 'dfc-gh-tokens-'));
});

afterEach(() => {
  fake.clearFaults();
  fake.tokenTtlMs = 60 * 60 * 1000;
});

afterAll(async () => {
  await fake.stop();
  rmSync(tempDir, { recursive: true, force: true });
  // Leak check across every test: no token the fake minted and no part of the key in any log line.
  const fragment = keyFragment();
  expect(fragment.length).toBeGreaterThan(20);
  for (const line of allRawLines) {
    expect(line).not.toContain(fragment);
    for (const minted of fake.mintedTokens) expect(line).not.toContain(minted.token);
  }
});

describe('InstallationTokens', () => {
  it('mints with a valid RS256 App JWT and reuses the token', async () => {
    const tokens = tokensFor();
    const first = await tokens.token(101, SCOPE);
    const again = await tokens.token(101, SCOPE);
    const third = await tokens.token(101, SCOPE);

    expect(first).toMatch(/^ghs_/);
    expect([again, third]).toEqual([first, first]);
    const calls = mintCalls(101);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call?.path).toBe('/api/v3/app/installations/101/access_tokens');
    expect(call?.headers['x-github-api-version']).toBe('2022-11-28');
    const jwt = /^bearer (\S+)$/i.exec(call?.headers.authorization ?? '')?.[1] ?? '';
    const claims = verifyAppJwt(jwt, { appId: APP_ID, publicKey: keys.publicKey, nowSeconds: Math.floor(Date.now() / 1000) });
    expect(claims.iss).toBe(String(APP_ID));
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(600);
  });

  it('asks GitHub for the one repository of the scope and its permissions only', async () => {
    const tokens = tokensFor();
    await tokens.token(120, SCOPE);
    await tokens.token(120, { repo: REPO, permissions: { metadata: 'read' } });
    expect(mintCalls(120).map((call) => call.body)).toEqual([
      { repositories: ['Hello-World'], permissions: { contents: 'read', issues: 'write', pull_requests: 'write', metadata: 'read' } },
      { repositories: ['Hello-World'], permissions: { metadata: 'read' } },
    ]);
  });

  it('never hands a token of one repository or permission set to another', async () => {
    const tokens = tokensFor();
    const run = await tokens.token(121, SCOPE);
    const otherRepo = await tokens.token(121, { repo: 'Octo-Org/Other', permissions: RUN_TOKEN_PERMISSIONS });
    const narrower = await tokens.token(121, { repo: REPO, permissions: { metadata: 'read' } });
    const sameAgain = await tokens.token(121, { repo: 'octo-org/hello-world', permissions: { metadata: 'read', issues: 'write', pull_requests: 'write', contents: 'read' } });
    expect(new Set([run, otherRepo, narrower]).size).toBe(3);
    // The same repo (GitHub compares names case-insensitively) and the same permissions, in any order: the cached token.
    expect(sameAgain).toBe(run);
    expect(mintCalls(121).map((call) => (call.body as { repositories: string[] }).repositories)).toEqual([['Hello-World'], ['Other'], ['Hello-World']]);
  });

  it('mints nothing for a scope that names no owner/name repository', async () => {
    const { logger, warnings } = captureLogs();
    const tokens = tokensFor({ logger });
    for (const repo of ['', 'Hello-World', 'a/b/c', 'a /b']) expect(await tokens.token(122, { repo, permissions: RUN_TOKEN_PERMISSIONS })).toBeUndefined();
    expect(mintCalls(122)).toEqual([]);
    expect(warnings()).toHaveLength(4);
  });

  it('keeps one token per installation', async () => {
    const tokens = tokensFor();
    const a = await tokens.token(102, SCOPE);
    const b = await tokens.token(103, SCOPE);
    expect(a).not.toBe(b);
    expect(fake.mintedTokens.find((m) => m.token === b)?.installationId).toBe(103);
  });

  it('shares one mint among 10 concurrent callers', async () => {
    fake.failNext('access_tokens', { delayMs: 100 });
    const tokens = tokensFor();
    const results = await Promise.all(Array.from({ length: 10 }, () => tokens.token(104, SCOPE)));
    expect(new Set(results).size).toBe(1);
    expect(results[0]).toMatch(/^ghs_/);
    expect(mintCalls(104)).toHaveLength(1);
  });

  it('re-mints once less than 5 minutes of the token are left', async () => {
    let clock = Date.now();
    const tokens = tokensFor({ now: () => clock });
    const first = await tokens.token(105, SCOPE);
    clock += 54 * 60 * 1000; // 6 minutes left: still reused
    expect(await tokens.token(105, SCOPE)).toBe(first);
    clock += 2 * 60 * 1000; // 4 minutes left: re-minted
    const second = await tokens.token(105, SCOPE);
    expect(second).toMatch(/^ghs_/);
    expect(second).not.toBe(first);
    expect(mintCalls(105)).toHaveLength(2);
  });

  it('reads the lifetime from expires_at: short-lived tokens are never reused', async () => {
    fake.tokenTtlMs = 4 * 60 * 1000;
    const tokens = tokensFor();
    const first = await tokens.token(106, SCOPE);
    const second = await tokens.token(106, SCOPE);
    expect(second).not.toBe(first);
    expect(mintCalls(106)).toHaveLength(2);
  });

  it.each([
    { name: '500', status: 500 },
    { name: '401', status: 401 },
  ])('resolves undefined and warns when the mint answers $name', async ({ status }) => {
    const { logger, warnings } = captureLogs();
    fake.failNext('access_tokens', { status });
    expect(await tokensFor({ logger }).token(107, SCOPE)).toBeUndefined();
    expect(warnings()).toEqual([
      expect.objectContaining({ installationId: 107, status, error: 'HttpError', msg: expect.stringContaining('without a token') }),
    ]);
  });

  it('resolves undefined and warns when GitHub is unreachable', async () => {
    const { logger, warnings } = captureLogs();
    expect(await tokensFor({ logger, url: deadUrl }).token(108, SCOPE)).toBeUndefined();
    const [warning] = warnings();
    expect(warning).toMatchObject({ installationId: 108, error: 'ECONNREFUSED' });
    expect(warning?.status).toBeUndefined();
  });

  it('gives up on a slow mint after timeoutMs', async () => {
    const { logger, warnings } = captureLogs();
    fake.failNext('access_tokens', { delayMs: 2000 });
    expect(await tokensFor({ logger, timeoutMs: 50 }).token(109, SCOPE)).toBeUndefined();
    expect(warnings()[0]).toMatchObject({ installationId: 109, error: 'TimeoutError' });
  });

  it('falls back to the cached token when a refresh fails before it expires', async () => {
    let clock = Date.now();
    const { logger, warnings } = captureLogs();
    const tokens = tokensFor({ logger, now: () => clock });
    const first = await tokens.token(110, SCOPE);
    clock += 57 * 60 * 1000;
    fake.failNext('access_tokens', { status: 500 });
    expect(await tokens.token(110, SCOPE)).toBe(first);
    expect(warnings()[0]).toMatchObject({ status: 500, isStaleUsable: true });
    clock += 4 * 60 * 1000; // expired now
    fake.failNext('access_tokens', { status: 500 });
    expect(await tokens.token(110, SCOPE)).toBeUndefined();
  });

  it('mints nothing for an installation id that is not a positive integer', async () => {
    const { logger, warnings } = captureLogs();
    const tokens = tokensFor({ logger });
    const before = fake.callsTo('access_tokens').length;
    expect(await tokens.token(0, SCOPE)).toBeUndefined();
    expect(await tokens.token(1.5, SCOPE)).toBeUndefined();
    expect(fake.callsTo('access_tokens')).toHaveLength(before);
    expect(warnings()).toHaveLength(2);
  });
});

describe('InstallationTokens.fromConfig', () => {
  it('reads the key from private_key_path', async () => {
    const path = join(tempDir, 'app.pem');
    writeFileSync(path, keys.privateKey);
    const tokens = InstallationTokens.fromConfig({ app_id: APP_ID, private_key_path: path, api_url: apiUrl }, captureLogs().logger);
    expect(await tokens?.token(111, SCOPE)).toMatch(/^ghs_/);
  });

  it('takes an inline private_key, also a PKCS#8 one with escaped newlines', async () => {
    const pkcs8 = generateAppKeyPair({ format: 'pkcs8' });
    const other = new FakeGitHub({ appId: 7, publicKey: pkcs8.publicKey });
    const otherUrl = await other.start();
    try {
      const inline = pkcs8.privateKey.replace(/\n/g, '\\n');
      const tokens = InstallationTokens.fromConfig({ app_id: 7, private_key: inline, api_url: otherUrl }, captureLogs().logger);
      expect(await tokens?.token(1, SCOPE)).toMatch(/^ghs_/);
    } finally {
      await other.stop();
    }
  });

  it('returns undefined when no App is configured', () => {
    const { logger, warnings } = captureLogs();
    expect(InstallationTokens.fromConfig({ api_url: apiUrl }, logger)).toBeUndefined();
    expect(warnings()).toHaveLength(0);
    expect(InstallationTokens.fromConfig({ app_id: APP_ID, api_url: apiUrl }, logger)).toBeUndefined();
    expect(warnings()).toHaveLength(1);
  });

  it('throws a ConfigError for an unreadable file or a broken key, without the key', () => {
    const logger = captureLogs().logger;
    const missing = join(tempDir, 'missing.pem');
    expect(() => InstallationTokens.fromConfig({ app_id: APP_ID, private_key_path: missing, api_url: apiUrl }, logger)).toThrow(
      /private_key_path: cannot read .*missing\.pem \(ENOENT\)/,
    );
    const broken = `-----BEGIN RSA PRIVATE KEY-----\n${keyFragment()}\n-----END RSA PRIVATE KEY-----`;
    let thrown: unknown;
    try {
      InstallationTokens.fromConfig({ app_id: APP_ID, private_key: broken, api_url: apiUrl }, logger);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).issues).toEqual(['channels.github.private_key: not a readable PEM private key']);
    expect(String((thrown as Error).message)).not.toContain(keyFragment());
  });
});

describe('hasWriteAccess', () => {
  let token: string;

  beforeAll(async () => {
    token = await installationToken(201);
    const roles: RepoRole[] = ['admin', 'maintain', 'write', 'triage', 'read', 'none'];
    for (const role of roles) fake.setRole(REPO, `user-${role}`, role);
    fake.setRole(REPO, 'renovate[bot]', 'write');
    fake.setRole(REPO, 'github-actions[bot]', 'read');
  });

  it.each([
    { login: 'user-admin', expected: true },
    { login: 'user-maintain', expected: true },
    { login: 'user-write', expected: true },
    { login: 'user-triage', expected: false },
    { login: 'user-read', expected: false },
    { login: 'user-none', expected: false },
    { login: 'stranger', expected: false },
    { login: 'renovate[bot]', expected: true },
    { login: 'github-actions[bot]', expected: false },
  ])('$login → $expected', async ({ login, expected }) => {
    expect(await hasWriteAccess({ token, apiUrl, repo: REPO, login })).toBe(expected);
  });

  it('asks GitHub with the installation token and the login as is', async () => {
    await hasWriteAccess({ token, apiUrl, repo: REPO, login: 'renovate[bot]' });
    const call = fake.callsTo('permission').at(-1);
    expect(call?.path).toBe('/api/v3/repos/Octo-Org/Hello-World/collaborators/renovate%5Bbot%5D/permission');
    expect(call?.headers.authorization).toBe(`token ${token}`);
  });

  it('accepts a ready Octokit client', async () => {
    const octokit = new Octokit({ auth: token, baseUrl: apiUrl });
    expect(await hasWriteAccess({ octokit, repo: REPO, login: 'user-write' })).toBe(true);
  });

  it('throws CHANNEL_UNAVAILABLE on a 5xx, without the token', async () => {
    fake.failNext('permission', { status: 502 });
    const error = await hasWriteAccess({ token, apiUrl, repo: REPO, login: 'user-admin' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChannelError);
    expect(error).toMatchObject({ platform: 'github', code: 'CHANNEL_UNAVAILABLE', cause: { status: 502 } });
    expect(JSON.stringify({ message: (error as Error).message, cause: (error as Error).cause })).not.toContain(token);
  });

  it('throws CHANNEL_UNAVAILABLE when GitHub is unreachable', async () => {
    const error = await hasWriteAccess({ token, apiUrl: deadUrl, repo: REPO, login: 'user-admin' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChannelError);
    expect(error).toMatchObject({ code: 'CHANNEL_UNAVAILABLE', cause: { error: 'ECONNREFUSED' } });
  });

  it('throws CHANNEL_UNAUTHORIZED for a token GitHub does not accept', async () => {
    const error = await hasWriteAccess({ token: 'ghs_not-minted', apiUrl, repo: REPO, login: 'user-admin' }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'CHANNEL_UNAUTHORIZED', cause: { status: 401 } });
  });

  it('throws CHANNEL_RATE_LIMITED on a 429', async () => {
    fake.failNext('permission', { status: 429 });
    const error = await hasWriteAccess({ token, apiUrl, repo: REPO, login: 'user-admin' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CHANNEL_RATE_LIMITED' });
  });

  it('rejects a repo that is not owner/name without calling GitHub', async () => {
    const before = fake.callsTo('permission').length;
    await expect(hasWriteAccess({ token, apiUrl, repo: 'no-slash', login: 'user-admin' })).rejects.toMatchObject({
      code: 'CHANNEL_REJECTED',
    });
    expect(fake.callsTo('permission')).toHaveLength(before);
  });
});

describe('addEyesReaction', () => {
  let token: string;

  beforeAll(async () => {
    token = await installationToken(301);
  });

  it.each<{ target: ReactionTarget; path: string }>([
    { target: { kind: 'issue', number: 7 }, path: '/api/v3/repos/Octo-Org/Hello-World/issues/7/reactions' },
    { target: { kind: 'issue_comment', id: 9001 }, path: '/api/v3/repos/Octo-Org/Hello-World/issues/comments/9001/reactions' },
    { target: { kind: 'review_comment', id: 9002 }, path: '/api/v3/repos/Octo-Org/Hello-World/pulls/comments/9002/reactions' },
  ])('reacts to $target.kind on its route with the installation token', async ({ target, path }) => {
    const { logger, warnings } = captureLogs();
    expect(await addEyesReaction({ token, apiUrl, repo: REPO, target, logger })).toBe(true);
    const call = fake.callsTo('reaction').at(-1);
    expect(call).toMatchObject({ method: 'POST', path, status: 201, body: { content: 'eyes' } });
    expect(call?.headers.authorization).toBe(`token ${token}`);
    expect(fake.reactions.at(-1)).toMatchObject({ repo: REPO, target, content: 'eyes', login: 'deerflow-bot[bot]' });
    expect(warnings()).toHaveLength(0);
  });

  it('treats a repeated reaction (200) as done', async () => {
    const target: ReactionTarget = { kind: 'issue', number: 8 };
    expect(await addEyesReaction({ token, apiUrl, repo: REPO, target, logger: captureLogs().logger })).toBe(true);
    expect(await addEyesReaction({ token, apiUrl, repo: REPO, target, logger: captureLogs().logger })).toBe(true);
    expect(fake.callsTo('reaction').at(-1)?.status).toBe(200);
  });

  it.each([
    { name: 'a 500', url: () => apiUrl, fault: { status: 500 }, expected: { status: 500, error: 'HttpError' } },
    { name: 'a 403', url: () => apiUrl, fault: { status: 403 }, expected: { status: 403 } },
    { name: 'no answer', url: () => deadUrl, fault: undefined, expected: { error: 'ECONNREFUSED' } },
  ])('warns and resolves false on $name', async ({ url, fault, expected }) => {
    if (fault) fake.failNext('reaction', fault);
    const { logger, warnings } = captureLogs();
    const target: ReactionTarget = { kind: 'issue_comment', id: 77 };
    await expect(addEyesReaction({ token, apiUrl: url(), repo: REPO, target, logger })).resolves.toBe(false);
    expect(warnings()).toEqual([expect.objectContaining({ repo: REPO, target: 'issue_comment', ...expected })]);
  });

  it('warns and resolves false with an expired token', async () => {
    const stale = await installationToken(302);
    fake.expireTokens(stale);
    const { logger, warnings } = captureLogs();
    const target: ReactionTarget = { kind: 'issue', number: 1 };
    expect(await addEyesReaction({ token: stale, apiUrl, repo: REPO, target, logger })).toBe(false);
    expect(warnings()[0]).toMatchObject({ status: 401 });
  });
});
