import { mkdtempSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hostToVirtual, runBash, virtualToHost } from '../../../../src/agent/sandbox/bash.js';
import { buildSandboxEnv } from '../../../../src/agent/sandbox/environment.js';
import { SandboxPaths } from '../../../../src/agent/sandbox/paths.js';

let paths: SandboxPaths;

beforeAll(async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dfc-sandbox-bash-')));
  paths = new SandboxPaths({ dataDir: join(root, 'data'), skillsDir: join(root, 'skills'), userId: 'u', threadId: 't' });
  await paths.ensure();
});

const baseEnv = {
  PATH: process.env.PATH,
  LANG: 'C.UTF-8',
  OPENAI_API_KEY: 'sk-leak-1',
  GITHUB_TOKEN: 'ghp_leak2',
  DATABASE_URL: 'postgres://app:leak3@db/app',
  MY_SECRET: 'leak4',
  DB_PASSWORD: 'leak5',
  aws_credential_file: 'leak6',
  SENTRY_DSN: 'https://leak7@sentry.io/1',
  REDIS_URL: 'redis://cache:6379',
  QUEUE_URL: 'amqp://guest:leak8@mq:5672',
  DOCS_URL: 'https://example.com/docs',
  GH_PAT: 'leak9',
  NPM_AUTH: 'leak10',
  SMTP_PASS: 'leak11',
  PASSENGER_COUNT: '3',
  BOT_CREDS: 'leak12',
  UNSET: undefined,
};

function run(command: string, overrides: Partial<Parameters<typeof runBash>[1]> = {}) {
  return runBash(command, {
    cwd: paths.workspaceDir,
    timeoutMs: 10_000,
    maxOutputChars: 2_000,
    env: buildSandboxEnv({ baseEnv, homeDir: paths.workspaceDir, perCallEnv: { DEERFLOW_CHANNEL_USER_ID: 'user-42' }, isIsolated: false }),
    pathMapping: paths.mappings(),
    ...overrides,
  });
}

/** Fields of /proc/<pid>/stat after the command name: [state, ppid, pgrp, ...]. */
function procStat(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** Alive = exists and is not a zombie (this VM's init reaps orphans late). */
function isAlive(pid: number): boolean {
  const stat = procStat(pid);
  if (stat === undefined) {
    try {
      process.kill(pid, 0); // No /proc (macOS): fall back to a signal probe.
      return true;
    } catch {
      return false;
    }
  }
  return stat[0] !== 'Z';
}

/** Live processes whose process group is `pgid`. */
function liveGroupMembers(pgid: number): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      const stat = procStat(pid);
      return stat !== undefined && stat[0] !== 'Z' && Number(stat[2]) === pgid;
    });
}

describe('path rewriting', () => {
  it('maps virtual prefixes in a command to host folders at segment boundaries only', () => {
    const mapping = [
      { virtualPath: '/mnt/user-data', hostPath: '/h/ud' },
      { virtualPath: '/mnt/skills', hostPath: '/h/sk' },
    ];
    expect(virtualToHost('cat /mnt/user-data/workspace/a "/mnt/skills" /mnt/skillsx', mapping)).toBe(
      'cat /h/ud/workspace/a "/h/sk" /mnt/skillsx',
    );
    expect(hostToVirtual('/h/ud/outputs/x: error in /h/sk', mapping)).toBe('/mnt/user-data/outputs/x: error in /mnt/skills');
  });
});

/** Unsandboxed (`sandbox.isolation: none`); the bubblewrap path is test/integration/sandbox/. */
describe('runBash', () => {
  it('runs with an allow-listed environment where PATH still works and per-call variables are visible', async () => {
    const result = await run('env; echo "which=$(command -v ls)"');
    expect(result).toMatchObject({ exitCode: 0, isTimedOut: false });
    for (const leak of ['leak', 'OPENAI_API_KEY', 'GITHUB_TOKEN', 'DATABASE_URL', 'MY_SECRET', 'DB_PASSWORD', 'BOT_CREDS', 'DOCS_URL']) {
      expect(result.output).not.toContain(leak);
    }
    expect(result.output).toContain('DEERFLOW_CHANNEL_USER_ID=user-42');
    expect(result.output).toMatch(/which=\/\S+\/ls/);
  });

  it('takes stdin from /dev/null so reading it does not hang', async () => {
    const result = await run('cat; echo done');
    expect(result.output).toBe('done\n');
  });

  it('reports the exit code and interleaves stderr', async () => {
    const result = await run('echo out; echo err >&2; exit 3');
    expect(result.exitCode).toBe(3);
    expect(result.output).toContain('out\n');
    expect(result.output).toContain('err\n');
  });

  it('kills the whole process group at the timeout', async () => {
    const started = Date.now();
    const result = await run('echo "sh=$$"; sleep 30 & echo "bg=$!"; sleep 30; wait', { timeoutMs: 500 });
    expect(result.isTimedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    const shell = Number(/sh=(\d+)/.exec(result.output)?.[1]);
    const background = Number(/bg=(\d+)/.exec(result.output)?.[1]);
    expect(shell).toBeGreaterThan(0);
    expect(background).toBeGreaterThan(0);
    // SIGKILL is delivered asynchronously; give the kernel a moment.
    await new Promise((r) => setTimeout(r, 100));
    expect(isAlive(background)).toBe(false);
    expect(isAlive(shell)).toBe(false);
    // The foreground sleep prints no pid; it shared the shell's process group (pgid = shell pid).
    expect(liveGroupMembers(shell)).toEqual([]);
  });

  it('returns once the shell exits even when a background child keeps the pipes open', async () => {
    const started = Date.now();
    const result = await run('sleep 30 & echo "bg=$!"; echo started');
    expect(result.isTimedOut).toBe(false);
    expect(result.output).toContain('started');
    expect(Date.now() - started).toBeLessThan(5_000);
    const pid = Number(/bg=(\d+)/.exec(result.output)?.[1]);
    expect(isAlive(pid)).toBe(true);
    process.kill(pid, 'SIGKILL');
  });

  it('cuts output over the cap, keeping head and tail with a note', async () => {
    const result = await run('echo HEAD-MARK; seq 1 100000; echo TAIL-MARK', { maxOutputChars: 1_000 });
    expect(result.output.startsWith('HEAD-MARK\n')).toBe(true);
    expect(result.output.trimEnd().endsWith('TAIL-MARK')).toBe(true);
    expect(result.output).toMatch(/output truncated: showing the first 500 and last 500 characters of \d+ bytes/);
    expect(result.output.length).toBeLessThan(1_200);
  });

  it('returns short output untouched', async () => {
    expect((await run('printf "h\\u00e9llo"')).output).toBe('héllo');
  });

  it.each([
    ['random bytes', 'head -c 1000 /dev/urandom'],
    ['NUL bytes', 'printf "a\\0b"'],
    ['invalid UTF-8', 'head -c 3000 /dev/zero | tr "\\0" "\\377"'],
  ])('replaces binary output (%s) with a note', async (_what, command) => {
    const result = await run(command);
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/^\[binary output, \d+ bytes\]$/);
  });

  it('runs in the workspace with virtual paths and never shows host paths', async () => {
    const result = await run(
      'pwd; echo "$HOME"; echo hi > /mnt/user-data/outputs/hi.txt; ls /mnt/user-data/outputs; cat /mnt/user-data/outputs/missing',
    );
    expect(result.output).toContain('/mnt/user-data/workspace\n/mnt/user-data/workspace\nhi.txt\n');
    expect(result.output).toContain('/mnt/user-data/outputs/missing');
    expect(result.output).not.toContain(paths.userDataDir);
  });

  it('rejects when the working directory does not exist', async () => {
    await expect(run('true', { cwd: join(paths.userDataDir, 'nope') })).rejects.toThrow();
  });
});
