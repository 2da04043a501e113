import { describe, expect, it } from 'vitest';
import {
  type BubblewrapProbe,
  bubblewrapArgs,
  resolveIsolation,
  type SystemEntry,
  sandboxUserFor,
} from '../../../../src/agent/sandbox/bubblewrap.js';
import { ConfigError } from '../../../../src/errors.js';

const system: SystemEntry[] = [
  { kind: 'bind', path: '/usr' },
  { kind: 'symlink', path: '/bin', target: 'usr/bin' },
  { kind: 'bind', path: '/etc' },
];
const mounts = { workspace: '/data/u/ws', uploads: '/data/u/up', outputs: '/data/u/out', skills: '/app/skills' };

/** `flag a b` triples/pairs as they appear in the argument list. */
function pairs(args: string[], flag: string, arity: number): string[][] {
  return args.flatMap((arg, i) => (arg === flag ? [args.slice(i + 1, i + 1 + arity)] : []));
}

describe('bubblewrapArgs', () => {
  it('binds only the system read-only and the thread folders at their virtual paths, never /', () => {
    const args = bubblewrapArgs({ mounts, isNetworkEnabled: true, system });
    expect(pairs(args, '--ro-bind', 2)).toEqual([
      ['/usr', '/usr'],
      ['/etc', '/etc'],
      ['/app/skills', '/mnt/skills'],
    ]);
    expect(pairs(args, '--bind', 2)).toEqual([
      ['/data/u/ws', '/mnt/user-data/workspace'],
      ['/data/u/up', '/mnt/user-data/uploads'],
      ['/data/u/out', '/mnt/user-data/outputs'],
    ]);
    expect(pairs(args, '--symlink', 2)).toEqual([['usr/bin', '/bin']]);
    expect(args.some((arg, i) => /bind/.test(arg) && args[i + 1] === '/')).toBe(false);
    expect(args).toEqual(expect.arrayContaining(['--die-with-parent', '--new-session', '--proc', '--dev', '--remount-ro']));
    expect(args.at(-1)).toBe('--');
    expect(pairs(args, '--chdir', 1)).toEqual([['/mnt/user-data/workspace']]);
  });

  it('gives its own network namespace when the network is off, for both user modes', () => {
    expect(bubblewrapArgs({ mounts, isNetworkEnabled: true, system })).toContain('--share-net');
    expect(bubblewrapArgs({ mounts, isNetworkEnabled: false, system })).not.toContain('--share-net');
    const root = sandboxUserFor(0);
    expect(bubblewrapArgs({ mounts, isNetworkEnabled: false, system, user: root })).toContain('--unshare-net');
    expect(bubblewrapArgs({ mounts, isNetworkEnabled: true, system, user: root })).not.toContain('--unshare-net');
  });

  it('drops a root server to 65534 with setpriv, without a user namespace mapping it to root', () => {
    const args = bubblewrapArgs({ mounts, isNetworkEnabled: true, system, user: sandboxUserFor(0) });
    expect(args).not.toContain('--unshare-all');
    expect(args).not.toContain('--unshare-user');
    expect(args).not.toContain('--uid');
    const command = args.slice(args.indexOf('--') + 1);
    expect(command).toEqual(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--']);
    expect(sandboxUserFor(1000)).toBeUndefined();
  });

  it('masks hidden paths inside bound system folders, and only those', () => {
    const args = bubblewrapArgs({
      mounts,
      isNetworkEnabled: true,
      system,
      hidden: [
        { path: '/etc/deerflow/config.yaml', isDirectory: false },
        { path: '/usr/local/deerflow', isDirectory: true },
        { path: '/root/app/.data', isDirectory: true },
        { path: '/usr', isDirectory: true },
      ],
    });
    expect(pairs(args, '--tmpfs', 1)).toEqual([['/usr/local/deerflow'], ['/tmp']]);
    expect(pairs(args, '--ro-bind', 2)).toContainEqual(['/dev/null', '/etc/deerflow/config.yaml']);
  });

  it('shows sandbox.read_only_paths read-only at the same path, after the private /tmp', () => {
    const args = bubblewrapArgs({ mounts, isNetworkEnabled: true, system, readOnlyPaths: ['/tmp/ca/cert.pem'] });
    expect(pairs(args, '--ro-bind-try', 2)).toEqual([['/tmp/ca/cert.pem', '/tmp/ca/cert.pem']]);
    expect(args.indexOf('--ro-bind-try')).toBeGreaterThan(args.indexOf('/tmp'));
  });

  it('leaves /mnt/skills out when there is no skills folder', () => {
    const args = bubblewrapArgs({ mounts: { ...mounts, skills: undefined }, isNetworkEnabled: true, system });
    expect(args).not.toContain('/mnt/skills');
  });
});

describe('resolveIsolation', () => {
  const works = async (): Promise<BubblewrapProbe> => ({ isAvailable: true, bwrapPath: '/usr/bin/bwrap' });
  const fails = async (): Promise<BubblewrapProbe> => ({ isAvailable: false, reason: 'bwrap failed (exit code 1): No permissions to create new namespace' });
  const never = async (): Promise<BubblewrapProbe> => {
    throw new Error('must not probe');
  };

  it('auto: bubblewrap when the probe works, else none with the reason', async () => {
    expect(await resolveIsolation('auto', works)).toEqual({ isolation: { kind: 'bubblewrap', isExplicit: false }, bwrapPath: '/usr/bin/bwrap' });
    expect(await resolveIsolation('auto', fails)).toEqual({
      isolation: { kind: 'none', isExplicit: false, reason: 'bwrap failed (exit code 1): No permissions to create new namespace' },
    });
  });

  it('bubblewrap: fails the start with a ConfigError when the probe fails', async () => {
    expect((await resolveIsolation('bubblewrap', works)).isolation).toEqual({ kind: 'bubblewrap', isExplicit: true });
    const error = await resolveIsolation('bubblewrap', fails).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      'sandbox.isolation: bubblewrap is not usable on this machine: bwrap failed (exit code 1): No permissions to create new namespace',
    ]);
  });

  it('none: an explicit choice, without probing', async () => {
    expect(await resolveIsolation('none', never)).toEqual({ isolation: { kind: 'none', isExplicit: true, reason: 'sandbox.isolation is none' } });
  });
});
