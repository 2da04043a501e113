import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { sandboxConfigSchema } from '../../../../src/agent/sandbox/config.js';
import { SandboxError, SandboxPaths } from '../../../../src/agent/sandbox/paths.js';

let root: string;
let paths: SandboxPaths;

beforeEach(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dfc-sandbox-paths-')));
  const skillsDir = join(root, 'skills');
  mkdirSync(join(skillsDir, 'public', 'demo'), { recursive: true });
  writeFileSync(join(skillsDir, 'public', 'demo', 'SKILL.md'), '# demo');
  paths = new SandboxPaths({ dataDir: join(root, 'data'), skillsDir, userId: 'u1', threadId: 't-1' });
  await paths.ensure();
});

async function refusal(virtualPath: string, write = false): Promise<SandboxError> {
  try {
    await paths.resolveVirtual(virtualPath, { write });
  } catch (error) {
    if (error instanceof SandboxError) return error;
    throw error;
  }
  throw new Error(`expected ${virtualPath} to be refused`);
}

describe('sandboxConfigSchema', () => {
  it('fills every default from an absent section and rejects unknown keys', () => {
    expect(sandboxConfigSchema.parse(undefined)).toEqual({
      bash_access: 'trusted',
      isolation: 'auto',
      network: true,
      pass_env: [],
      read_only_paths: [],
      bash_timeout_seconds: 600,
      max_output_chars: 20_000,
      max_read_chars: 100_000,
    });
    expect(sandboxConfigSchema.safeParse({ bash_timeout: 5 }).success).toBe(false);
    expect(sandboxConfigSchema.safeParse({ bash_timeout_seconds: 0 }).success).toBe(false);
    expect(sandboxConfigSchema.safeParse({ isolation: 'docker' }).success).toBe(false);
    expect(sandboxConfigSchema.safeParse({ network: 'off' }).success).toBe(false);
  });
});

describe('SandboxPaths', () => {
  it('lays out host folders per user and thread', () => {
    expect(paths.workspaceDir).toBe(join(root, 'data', 'users', 'u1', 'threads', 't-1', 'user-data', 'workspace'));
    expect(paths.outputsDir).toBe(join(root, 'data', 'users', 'u1', 'threads', 't-1', 'user-data', 'outputs'));
  });

  it.each([
    ['user id', { userId: '../x', threadId: 't' }],
    ['thread id', { userId: 'u', threadId: 'a/b' }],
    ['user id', { userId: '', threadId: 't' }],
  ])('refuses an unsafe %s', (_what, ids) => {
    expect(() => new SandboxPaths({ dataDir: root, skillsDir: root, ...ids })).toThrow(SandboxError);
  });

  it.each([
    ['/mnt/user-data/workspace/a.txt', 'workspace', 'workspace/a.txt'],
    ['/mnt/user-data/uploads/in.csv', 'uploads', 'uploads/in.csv'],
    ['/mnt/user-data/outputs/sub/new.md', 'outputs', 'outputs/sub/new.md'],
    ['notes/today.md', 'workspace', 'workspace/notes/today.md'],
    ['/mnt/user-data/workspace/', 'workspace', 'workspace'],
  ])('maps %s to the %s folder', async (virtualPath, area, hostTail) => {
    const resolved = await paths.resolveVirtual(virtualPath, { write: true });
    expect(resolved.area).toBe(area);
    expect(resolved.hostPath).toBe(join(paths.userDataDir, hostTail));
  });

  it('maps /mnt/skills for reading', async () => {
    const resolved = await paths.resolveVirtual('/mnt/skills/public/demo/SKILL.md', { write: false });
    expect(resolved.hostPath).toBe(join(root, 'skills', 'public', 'demo', 'SKILL.md'));
    expect(resolved.area).toBe('skills');
  });

  it.each([
    ['/mnt/user-data/workspace/../../../../etc/passwd', /must not contain '\.\.'/],
    ['../../etc/passwd', /must not contain '\.\.'/],
    ['/etc/passwd', /outside the sandbox/],
    ['/mnt/user-data/other/x', /outside the sandbox/],
    ['/mnt/skillsfoo/x', /outside the sandbox/],
    ['', /empty/],
    ['/mnt/user-data/workspace/a\0b', /NUL/],
  ])('refuses %j', async (virtualPath, reason) => {
    expect((await refusal(virtualPath)).message).toMatch(reason);
  });

  it('refuses an absolute host path, even to its own workspace, without echoing other host paths', async () => {
    const error = await refusal(join(paths.workspaceDir, 'a.txt'));
    expect(error.message).toMatch(/outside the sandbox/);
    expect(error.message).toContain('/mnt/user-data/{workspace,uploads,outputs}');
  });

  it('refuses writes under /mnt/skills and to /mnt/user-data itself, but reads them', async () => {
    expect((await refusal('/mnt/skills/public/demo/SKILL.md', true)).message).toMatch(/read-only/);
    expect((await refusal('/mnt/skills/new.md', true)).message).toMatch(/read-only/);
    expect((await refusal('/mnt/user-data', true)).message).toMatch(/read-only/);
    await expect(paths.resolveVirtual('/mnt/user-data', { write: false })).resolves.toMatchObject({ area: 'user-data' });
  });

  it('refuses a symlink in the workspace that points to /etc, and files through it', async () => {
    symlinkSync('/etc', join(paths.workspaceDir, 'etc'));
    const error = await refusal('/mnt/user-data/workspace/etc/passwd');
    expect(error.message).toMatch(/resolves outside the sandbox/);
    expect(error.message).toContain("'/mnt/user-data/workspace/etc/passwd'");
    expect(error.message).not.toContain(root);
    expect((await refusal('/mnt/user-data/workspace/etc')).message).toMatch(/outside/);
  });

  it('refuses a new file under a symlinked parent directory that leaves the root', async () => {
    const outside = join(root, 'outside');
    mkdirSync(outside);
    symlinkSync(outside, join(paths.workspaceDir, 'linked'));
    expect((await refusal('/mnt/user-data/workspace/linked/deep/new.txt', true)).message).toMatch(/outside/);
  });

  it('refuses a symlink from one thread folder into another (outputs → workspace)', async () => {
    writeFileSync(join(paths.workspaceDir, 'secret.txt'), 'x');
    symlinkSync(join(paths.workspaceDir, 'secret.txt'), join(paths.outputsDir, 'shared.txt'));
    expect((await refusal('/mnt/user-data/outputs/shared.txt')).message).toMatch(/outside/);
  });

  it('allows a symlink that stays inside its folder, resolving to the real file', async () => {
    writeFileSync(join(paths.workspaceDir, 'real.txt'), 'x');
    symlinkSync(join(paths.workspaceDir, 'real.txt'), join(paths.workspaceDir, 'alias.txt'));
    const resolved = await paths.resolveVirtual('alias.txt', { write: false });
    expect(resolved.hostPath).toBe(join(paths.workspaceDir, 'real.txt'));
  });

  it('refuses writing through a dangling symlink', async () => {
    symlinkSync(join(root, 'nowhere', 'file'), join(paths.workspaceDir, 'dangling'));
    expect((await refusal('/mnt/user-data/workspace/dangling', true)).message).toMatch(/broken symlink/);
  });

  it('refuses a path under a regular file with a clear message', async () => {
    writeFileSync(join(paths.workspaceDir, 'file.txt'), 'x');
    expect((await refusal('/mnt/user-data/workspace/file.txt/x')).message).toMatch(/not a directory/);
  });

  it('reports a missing skills folder as a missing path', async () => {
    const bare = new SandboxPaths({ dataDir: join(root, 'd2'), skillsDir: join(root, 'none'), userId: 'u', threadId: 't' });
    await bare.ensure();
    await expect(bare.resolveVirtual('/mnt/skills/x', { write: false })).rejects.toThrow(/does not exist/);
  });
});
