import { spawn } from 'node:child_process';
import { accessSync, constants, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { ConfigError } from '../../errors.js';
import type { SandboxIsolationSetting } from './config.js';
import { VIRTUAL_SKILLS, VIRTUAL_USER_DATA } from './paths.js';

/**
 * bubblewrap (`bwrap`, Debian package `bubblewrap`) around every process the agent starts: a
 * new PID, IPC, UTS, cgroup and user namespace (and network namespace when the network is off),
 * the system folders read-only, the thread's three folders read-write at their virtual paths,
 * the skills read-only, nothing else of the host. https://github.com/containers/bubblewrap
 */

/** What the sandbox of this process is, decided once at start (`sandbox.isolation`). */
export interface SandboxIsolation {
  /** `bubblewrap`: every shell runs isolated; `none`: as the server's own OS user, with the host in sight. */
  kind: 'bubblewrap' | 'none';
  /** True when the operator chose this (`sandbox.isolation: bubblewrap | none`), false when `auto` fell back or succeeded. */
  isExplicit: boolean;
  /** Why isolation is off when it is (`auto` whose probe failed); never holds a secret. */
  reason?: string;
}

/** The OS user a sandbox starts as. */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/** `nobody`/`nogroup` on Debian: the user the sandbox runs as when the server runs as root. */
export const UNPRIVILEGED_ID = 65534;

/**
 * The user sandboxed shells run as: {@link UNPRIVILEGED_ID} when this process is root, else
 * undefined (the server's own user, which bubblewrap maps into a user namespace of its own).
 */
export function sandboxUserFor(uid: number | undefined): SandboxUser | undefined {
  return uid === 0 ? { uid: UNPRIVILEGED_ID, gid: UNPRIVILEGED_ID } : undefined;
}

/**
 * The namespaces, and for a root server the switch to the sandbox user. A server that is not
 * root runs bwrap as itself: `--unshare-all` gives it a user namespace too. A root server runs
 * bwrap as root without a user namespace, and the first thing inside is `setpriv` dropping to
 * `user` with no capabilities, no groups and no_new_privs. Not the other way round (bwrap started
 * as 65534): bwrap resolves mount sources as the user it runs as, and a data_dir under a folder
 * only root may enter (`/root`, a 0700 temp folder) would then fail to mount. Nor bwrap as root
 * with `--unshare-user --uid 65534`: that maps the sandbox user to host root, which owns (and so
 * may read) every root file a bind shows, `/etc/ssh/ssh_host_*_key` included.
 */
function identityArgs(user: SandboxUser | undefined, isNetworkEnabled: boolean): { before: string[]; command: string[] } {
  if (user === undefined) return { before: ['--unshare-all', ...(isNetworkEnabled ? ['--share-net'] : [])], command: [] };
  return {
    before: [
      '--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try',
      ...(isNetworkEnabled ? [] : ['--unshare-net']),
      // Only what setpriv needs to switch user and empty the bounding set; it gives all of them up.
      '--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP',
    ],
    command: [
      'setpriv', `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups',
      '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--',
    ],
  };
}

/** Host folders mounted into one sandbox. All must be real directories (checked by `SandboxPaths.mounts()`). */
export interface BubblewrapMounts {
  workspace: string;
  uploads: string;
  outputs: string;
  /** Mounted read-only at `/mnt/skills` when given. */
  skills?: string | undefined;
}

/** One top-level system path: bound read-only, or recreated as the same symlink (`/bin -> usr/bin`). */
export type SystemEntry = { kind: 'bind'; path: string } | { kind: 'symlink'; path: string; target: string };

/** What a shell needs of the system; `/lib32` and friends exist on some machines only. */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'] as const;

/**
 * The system paths of this machine as the sandbox will show them: real folders bound read-only,
 * top-level symlinks (merged-/usr systems) recreated, missing ones left out. When
 * `/etc/resolv.conf` is a symlink out of `/etc` (systemd-resolved), its target folder is bound
 * too, so name resolution works with the network on. Reads the file system (lstat only).
 */
export function systemLayout(): SystemEntry[] {
  const entries: SystemEntry[] = [];
  for (const path of SYSTEM_PATHS) {
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink()) entries.push({ kind: 'symlink', path, target: readlinkSync(path) });
      else if (info.isDirectory()) entries.push({ kind: 'bind', path });
    } catch {
      // Absent here.
    }
  }
  try {
    if (lstatSync('/etc/resolv.conf').isSymbolicLink()) {
      const target = dirname(realpathSync('/etc/resolv.conf'));
      if (!entries.some((entry) => entry.kind === 'bind' && isInside(target, entry.path))) entries.push({ kind: 'bind', path: target });
    }
  } catch {
    // No resolver configuration, or a dangling link: nothing to add.
  }
  return entries;
}

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'));
}

function isStrictlyInside(path: string, root: string): boolean {
  return path !== root && isInside(path, root);
}

function systemMountArgs(system: readonly SystemEntry[]): string[] {
  return system.flatMap((entry) =>
    entry.kind === 'bind' ? ['--ro-bind', entry.path, entry.path] : ['--symlink', entry.target, entry.path],
  );
}

export interface BubblewrapArgsOptions {
  mounts: BubblewrapMounts;
  /** False = a network namespace of its own with only loopback: no host, no internet. */
  isNetworkEnabled: boolean;
  /** From {@link systemLayout}. */
  system: readonly SystemEntry[];
  /** The sandbox user when the server runs as root ({@link sandboxUserFor}). */
  user?: SandboxUser | undefined;
  /**
   * Host paths that must not be seen (data dir, config file, repository): masked (an empty
   * tmpfs for a folder, `/dev/null` for a file) when they lie inside a bound system folder.
   * Paths elsewhere are absent anyway. Each is given with its kind, checked by the caller.
   */
  hidden?: readonly { path: string; isDirectory: boolean }[];
  /** Host paths shown read-only at the same path (`sandbox.read_only_paths`); missing ones are skipped. */
  readOnlyPaths?: readonly string[];
}

/**
 * The bwrap arguments for one call, up to the command (`--`, and `setpriv …` for a root
 * server): append `bash -c …`. `/` itself is a fresh tmpfs, remounted read-only once the mounts
 * are in place, so nothing outside the three thread folders and `/tmp` (a private tmpfs) can be
 * written. Pure.
 */
export function bubblewrapArgs(options: BubblewrapArgsOptions): string[] {
  const identity = identityArgs(options.user, options.isNetworkEnabled);
  // --die-with-parent: the whole sandbox goes when the server does; --new-session: no TIOCSTI
  // keystrokes into a terminal the server might hold (CVE-2017-5226).
  const args = [...identity.before, '--die-with-parent', '--new-session', ...systemMountArgs(options.system)];
  const boundRoots = options.system.filter((entry) => entry.kind === 'bind').map((entry) => entry.path);
  for (const hidden of options.hidden ?? []) {
    if (!boundRoots.some((root) => isStrictlyInside(hidden.path, root))) continue;
    if (hidden.isDirectory) args.push('--tmpfs', hidden.path);
    else args.push('--ro-bind', '/dev/null', hidden.path);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp');
  const { mounts } = options;
  // Made explicitly: the folders bwrap would create for the mount points are not searchable by a
  // switched user (mode 0700 in privileged mode).
  args.push('--perms', '0755', '--dir', '/mnt', '--perms', '0755', '--dir', VIRTUAL_USER_DATA);
  args.push(
    '--bind', mounts.workspace, `${VIRTUAL_USER_DATA}/workspace`,
    '--bind', mounts.uploads, `${VIRTUAL_USER_DATA}/uploads`,
    '--bind', mounts.outputs, `${VIRTUAL_USER_DATA}/outputs`,
  );
  if (mounts.skills !== undefined) args.push('--ro-bind', mounts.skills, VIRTUAL_SKILLS);
  for (const path of options.readOnlyPaths ?? []) {
    // Its parent made searchable first, for the same reason as /mnt above.
    args.push('--perms', '0755', '--dir', dirname(path), '--ro-bind-try', path, path);
  }
  args.push('--chdir', `${VIRTUAL_USER_DATA}/workspace`, '--remount-ro', '/', '--', ...identity.command);
  return args;
}

/**
 * `paths` as {@link BubblewrapArgsOptions.hidden} wants them: real paths with their kind. Missing
 * paths are left out (a mount point cannot be made inside a read-only folder).
 */
export async function hiddenEntries(paths: readonly string[]): Promise<{ path: string; isDirectory: boolean }[]> {
  const entries: { path: string; isDirectory: boolean }[] = [];
  for (const path of new Set(paths.map((p) => resolve(p)))) {
    try {
      const real = await realpath(path);
      entries.push({ path: real, isDirectory: (await stat(real)).isDirectory() });
    } catch {
      // Absent: nothing to hide.
    }
  }
  return entries;
}

/** `bwrap` on this machine: the first executable in `searchPath` (a PATH value), then `/usr/bin/bwrap`. */
export function findBubblewrap(searchPath: string | undefined): string | undefined {
  const dirs = [...(searchPath ?? '').split(delimiter).filter((dir) => dir.startsWith('/')), '/usr/bin'];
  for (const dir of dirs) {
    const candidate = join(dir, 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
      return resolve(candidate);
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/** The outcome of trying bubblewrap once: the binary to use, or why it cannot be used. */
export type BubblewrapProbe = { isAvailable: true; bwrapPath: string } | { isAvailable: false; reason: string };

const PROBE_TIMEOUT_MS = 10_000;
/** Most characters of bwrap's own complaint kept in the reason. */
const MAX_REASON_CHARS = 300;

/**
 * Starts `bwrap … -- true` with the same namespaces, system mounts and (for `user`) switch of
 * user a shell gets, and resolves with the binary when it exits 0, else with bwrap's first error line
 * (no namespaces allowed, no binary, …). Never rejects.
 */
export function probeBubblewrap(options: { searchPath: string | undefined; user?: SandboxUser | undefined }): Promise<BubblewrapProbe> {
  const bwrapPath = findBubblewrap(options.searchPath);
  if (bwrapPath === undefined) return Promise.resolve({ isAvailable: false, reason: 'bwrap was not found (install the bubblewrap package)' });
  const identity = identityArgs(options.user, true);
  const args = [...identity.before, '--die-with-parent', '--new-session', ...systemMountArgs(systemLayout())];
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--remount-ro', '/', '--', ...identity.command, 'true');
  return new Promise((resolvePromise) => {
    let stderr = '';
    const child = spawn(bwrapPath, args, { cwd: '/', env: { PATH: '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_REASON_CHARS) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      resolvePromise({ isAvailable: false, reason: `bwrap could not be started (${(error as NodeJS.ErrnoException).code ?? 'error'})` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolvePromise({ isAvailable: true, bwrapPath });
      const complaint = stderr.split('\n')[0]?.trim().slice(0, MAX_REASON_CHARS) ?? '';
      const how = signal === null ? `exit code ${code}` : `killed by ${signal}`;
      resolvePromise({ isAvailable: false, reason: `bwrap failed (${how})${complaint === '' ? '' : `: ${complaint}`}` });
    });
  });
}

/** Isolation decided at start, and the binary to run when it is bubblewrap. */
export interface ResolvedIsolation {
  isolation: SandboxIsolation;
  bwrapPath?: string;
}

/**
 * Applies `sandbox.isolation`: `none` = unsandboxed by choice (no probe); `bubblewrap` = the
 * probe must succeed; `auto` = bubblewrap when the probe succeeds, else none with the reason.
 *
 * @throws ConfigError for `bubblewrap` when the probe fails (the start must fail, not fall back).
 */
export async function resolveIsolation(setting: SandboxIsolationSetting, probe: () => Promise<BubblewrapProbe>): Promise<ResolvedIsolation> {
  if (setting === 'none') return { isolation: { kind: 'none', isExplicit: true, reason: 'sandbox.isolation is none' } };
  const result = await probe();
  if (result.isAvailable) return { isolation: { kind: 'bubblewrap', isExplicit: setting === 'bubblewrap' }, bwrapPath: result.bwrapPath };
  if (setting === 'bubblewrap') {
    throw new ConfigError([`sandbox.isolation: bubblewrap is not usable on this machine: ${result.reason}`]);
  }
  return { isolation: { kind: 'none', isExplicit: false, reason: result.reason } };
}
