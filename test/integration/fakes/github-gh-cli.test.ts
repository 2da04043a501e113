import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createSelfSignedCert,
  FakeGitHub,
  generateAppKeyPair,
  ghEnvironment,
  type RecordedGitHubCall,
  type SelfSignedCert,
} from '../../fakes/github/index.js';

const REPO = 'Octo-Org/Hello-World';
const BOT = 'deerflow-bot[bot]';

let cert: SelfSignedCert;
let publicKey: string;
let tempDir: string;
let home: string;
let fake: FakeGitHub;

interface GhResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Fails the whole file, not skips it, when the real binary is missing: CI installs it. */
function requireGh(): string {
  try {
    return execFileSync('gh', ['--version'], { encoding: 'utf8' }).split('\n')[0] ?? '';
  } catch (error) {
    throw new Error(
      `The GitHub CLI \`gh\` is not installed or not on PATH (${String(error)}). These tests run the real binary against ` +
        'the fake GitHub; install it (Debian/Ubuntu: `apt-get install gh`).',
    );
  }
}

/** Runs the real `gh` with only PATH, a temp HOME and `ghEnvironment`; never rejects. */
function gh(args: string[], environment: Record<string, string> = envFor(fake.mintToken(1).token)): Promise<GhResult> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ...environment };
  return new Promise((resolve) => {
    execFile('gh', args, { env, timeout: 20_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

function envFor(token: string): Record<string, string> {
  return ghEnvironment({ host: fake.host, token, caFile: cert.certPath, configDir: join(tempDir, 'gh-config') });
}

function graphqlCalls(): RecordedGitHubCall[] {
  return fake.callsTo('graphql');
}

beforeAll(() => {
  requireGh();
  cert = createSelfSignedCert();
  publicKey = generateAppKeyPair().publicKey;
  tempDir = mkdtempSync(join(tmpdir(), 'dfc-gh-cli-'));
  home = join(tempDir, 'home');
  mkdirSync(home);
});

afterAll(() => {
  cert?.cleanup();
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
});

beforeEach(async () => {
  fake = new FakeGitHub({ appId: 4242, publicKey, appSlug: 'deerflow-bot', tls: { cert: cert.cert, key: cert.key } });
  await fake.start();
});

afterEach(() => fake.stop());

describe('gh CLI against the fake GitHub over HTTPS', () => {
  it('serves HTTPS on 127.0.0.1 with GitHub Enterprise paths', () => {
    expect(fake.host).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(fake.apiUrl).toBe(`https://${fake.host}/api/v3`);
  });

  it('`gh issue comment` lands as a comment on the issue, sent with the installation token', async () => {
    fake.addIssue(REPO, 12, { title: 'Crash on start' });
    const { token } = fake.mintToken(77);

    const result = await gh(['issue', 'comment', '12', '--repo', REPO, '--body', 'Looking into it.'], envFor(token));

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.trim()).toMatch(new RegExp(`^https://${fake.host}/${REPO}/issues/12#issuecomment-\\d+$`));
    expect(fake.comments).toEqual([{ id: expect.any(Number), repo: REPO, number: 12, body: 'Looking into it.', login: BOT }]);
    expect(graphqlCalls().map((call) => call.operation)).toEqual(['IssueByNumber', 'CommentCreate']);
    for (const call of graphqlCalls()) {
      expect(call.headers.authorization).toBe(`token ${token}`);
      expect(call.graphqlErrors).toBeUndefined();
    }
  });

  it('`gh pr comment` lands as a comment on the pull request', async () => {
    fake.addIssue(REPO, 34, { isPullRequest: true });
    const { token } = fake.mintToken(77);

    const result = await gh(['pr', 'comment', '34', '--repo', REPO, '--body', 'LGTM, merging after CI.'], envFor(token));

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.trim()).toMatch(new RegExp(`/${REPO}/pull/34#issuecomment-\\d+$`));
    expect(fake.comments).toEqual([{ id: expect.any(Number), repo: REPO, number: 34, body: 'LGTM, merging after CI.', login: BOT }]);
    expect(graphqlCalls().map((call) => [call.operation, call.headers.authorization])).toEqual([
      ['PullRequestByNumber', `token ${token}`],
      ['CommentCreate', `token ${token}`],
    ]);
  });

  it('`gh pr comment` on a number that is an issue fails without commenting', async () => {
    fake.addIssue(REPO, 5);

    const result = await gh(['pr', 'comment', '5', '--repo', REPO, '--body', 'hi']);

    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('Could not resolve to a PullRequest with the number of 5.');
    expect(fake.comments).toEqual([]);
    expect(graphqlCalls().at(-1)?.graphqlErrors).toEqual(['Could not resolve to a PullRequest with the number of 5.']);
  });

  it('answers an operation it does not know with a GraphQL error, recorded on the call', async () => {
    const result = await gh(['api', 'graphql', '-f', 'query=query { viewer { login } }']);

    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("Field 'viewer' doesn't exist on type 'Query'");
    expect(graphqlCalls().map((call) => [call.operation, call.graphqlErrors])).toEqual([
      ['viewer', ["Field 'viewer' doesn't exist on type 'Query'"]],
    ]);
  });

  it('`gh api` reaches the REST routes under /api/v3 with the token', async () => {
    const { token } = fake.mintToken(77);

    const result = await gh(['api', `repos/${REPO}/issues/9/comments`, '-f', 'body=via REST'], envFor(token));

    expect(result.code).toBe(0);
    expect(fake.comments).toEqual([{ id: expect.any(Number), repo: REPO, number: 9, body: 'via REST', login: BOT }]);
    expect(fake.callsTo('comment').map((call) => [call.path, call.headers.authorization])).toEqual([
      [`/api/v3/repos/${REPO}/issues/9/comments`, `token ${token}`],
    ]);
  });

  it.each([
    { name: 'an unknown token', token: () => 'ghs_notAnInstallationToken' },
    {
      name: 'an expired token',
      token: () => {
        const { token } = fake.mintToken(77);
        fake.expireTokens(token);
        return token;
      },
    },
  ])('with $name gh exits non-zero and no comment is stored', async ({ token }) => {
    fake.addIssue(REPO, 12);

    const result = await gh(['issue', 'comment', '12', '--repo', REPO, '--body', 'never stored'], envFor(token()));

    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('HTTP 401: Bad credentials');
    expect(fake.comments).toEqual([]);
    expect(graphqlCalls().map((call) => call.status)).toEqual([401]);
  });

  it('sends no token to an enterprise host from GH_TOKEN alone (why ghEnvironment sets GH_ENTERPRISE_TOKEN)', async () => {
    fake.addIssue(REPO, 12);
    const { GH_ENTERPRISE_TOKEN: token = '', ...rest } = envFor(fake.mintToken(77).token);

    const result = await gh(['issue', 'comment', '12', '--repo', REPO, '--body', 'never stored'], { ...rest, GH_TOKEN: token });

    expect(result.code).not.toBe(0);
    expect(graphqlCalls()[0]?.headers.authorization).toBeUndefined();
    expect(fake.comments).toEqual([]);
  });
});
