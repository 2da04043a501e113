import { lchown, lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { AppError, type AppErrorOptions } from '../../errors.js';

/** Where the agent sees the thread's user data. */
export const VIRTUAL_USER_DATA = '/mnt/user-data';
/** Where the agent sees the shared skills folder (read-only). */
export const VIRTUAL_SKILLS = '/mnt/skills';

/** One of the folders a virtual path may land in. `user-data` is the read-only parent of the three thread folders. */
export type SandboxArea = 'workspace' | 'uploads' | 'outputs' | 'skills' | 'user-data';

/** A path the agent asked for, accepted: `hostPath` is already symlink-resolved and inside `area`. */
export interface ResolvedPath {
  virtualPath: string;
  hostPath: string;
  area: SandboxArea;
}

/** One virtual prefix and the host folder behind it, for rewriting commands and output. */
export interface PathMappingEntry {
  virtualPath: string;
  hostPath: string;
}

/**
 * A path or id the sandbox refused. `message` is model-facing: it names the virtual path the agent
 * used and never a host path, so it can go back to the model as a tool error as-is.
 */
export class SandboxError extends AppError {
  constructor(message: string, options: AppErrorOptions = {}) {
    super('BAD_REQUEST', message, { status: 400, userMessage: message, ...options });
    this.name = 'SandboxError';
  }
}

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_SHOWN_PATH_CHARS = 200;
const ALLOWED_HINT = `use paths under ${VIRTUAL_USER_DATA}/{workspace,uploads,outputs} or ${VIRTUAL_SKILLS}`;

/** Quotes a model-supplied path for an error message, shortened so a huge argument cannot flood it. */
export function showPath(virtualPath: string): string {
  const shown =
    virtualPath.length > MAX_SHOWN_PATH_CHARS ? `${virtualPath.slice(0, MAX_SHOWN_PATH_CHARS)}…` : virtualPath;
  return `'${shown}'`;
}

export interface SandboxPathsOptions {
  /** Root of all persisted data; thread folders live under `<dataDir>/users/<user>/threads/<thread>/user-data`. */
  dataDir: string;
  userId: string;
  threadId: string;
  /** Host folder shown read-only as `/mnt/skills`; it need not exist. */
  skillsDir: string;
  /**
   * The OS user sandboxed shells run as when it is not this process's own (the server runs as
   * root): the thread folders, and what the server writes into them, are handed to it.
   */
  owner?: { uid: number; gid: number } | undefined;
}

interface AreaRoot {
  area: SandboxArea;
  virtualPath: string;
  hostPath: string;
  isWritable: boolean;
}

/**
 * The host folders of one thread's local sandbox and the translation between the agent's virtual
 * paths and them. Construction is pure; `ensure()` and `resolveVirtual()` touch the file system.
 *
 * Not a security boundary against a hostile local process: checks are made before each file
 * operation, so a symlink swapped in between check and use (a race) is not caught.
 */
export class SandboxPaths {
  readonly userDataDir: string;
  readonly workspaceDir: string;
  readonly uploadsDir: string;
  readonly outputsDir: string;
  readonly skillsDir: string;
  /** `<dataDir>/users/<user>` and every folder below it down to the three area roots, top first. */
  private readonly chain: readonly string[];
  private readonly owner: { uid: number; gid: number } | undefined;
  private readonly roots: readonly AreaRoot[];
  private realRoots = new Map<SandboxArea, string>();

  /** @throws SandboxError when `userId` or `threadId` is not `[A-Za-z0-9_-]{1,128}`. */
  constructor(options: SandboxPathsOptions) {
    for (const [name, value] of [
      ['user id', options.userId],
      ['thread id', options.threadId],
    ] as const) {
      if (!SAFE_ID.test(value)) throw new SandboxError(`invalid ${name}: only letters, digits, '_' and '-' are allowed`);
    }
    this.userDataDir = resolve(options.dataDir, 'users', options.userId, 'threads', options.threadId, 'user-data');
    this.workspaceDir = join(this.userDataDir, 'workspace');
    this.uploadsDir = join(this.userDataDir, 'uploads');
    this.outputsDir = join(this.userDataDir, 'outputs');
    this.skillsDir = resolve(options.skillsDir);
    this.owner = options.owner;
    const userDir = resolve(options.dataDir, 'users', options.userId);
    const threadsDir = join(userDir, 'threads');
    this.chain = [userDir, threadsDir, join(threadsDir, options.threadId), this.userDataDir, this.workspaceDir, this.uploadsDir, this.outputsDir];
    // Longest virtual prefix first, so `/mnt/user-data/workspace` wins over `/mnt/user-data`.
    this.roots = [
      { area: 'workspace', virtualPath: `${VIRTUAL_USER_DATA}/workspace`, hostPath: this.workspaceDir, isWritable: true },
      { area: 'uploads', virtualPath: `${VIRTUAL_USER_DATA}/uploads`, hostPath: this.uploadsDir, isWritable: true },
      { area: 'outputs', virtualPath: `${VIRTUAL_USER_DATA}/outputs`, hostPath: this.outputsDir, isWritable: true },
      { area: 'user-data', virtualPath: VIRTUAL_USER_DATA, hostPath: this.userDataDir, isWritable: false },
      { area: 'skills', virtualPath: VIRTUAL_SKILLS, hostPath: this.skillsDir, isWritable: false },
    ];
  }

  /**
   * Creates the three thread folders (idempotent), hands them to the sandbox user when there is
   * one, and records real paths for output rewriting.
   *
   * @throws SandboxError when a thread folder or a parent up to `<dataDir>/users/<user>` is a
   *   symlink or not a directory (see {@link assertRealFolders}).
   */
  async ensure(): Promise<void> {
    await this.assertRealFolders();
    for (const dir of [this.workspaceDir, this.uploadsDir, this.outputsDir]) await mkdir(dir, { recursive: true });
    // Checked again: mkdir follows a symlink that appeared in between, and chown must never.
    await this.assertRealFolders();
    if (this.owner !== undefined) {
      for (const dir of [this.workspaceDir, this.uploadsDir, this.outputsDir]) await lchown(dir, this.owner.uid, this.owner.gid);
    }
    for (const root of this.roots) {
      try {
        this.realRoots.set(root.area, await realpath(root.hostPath));
      } catch {
        this.realRoots.delete(root.area); // The skills folder may be absent.
      }
    }
  }

  /**
   * Refuses when `<dataDir>/users/<user>`, `threads/`, the thread's folder, `user-data/` or one of
   * `workspace/`, `uploads/`, `outputs/` is a symlink or not a directory (lstat, never followed):
   * a shell that swapped `outputs/` for a link to `/etc` must not make the file tools, the
   * delivery of presented files or a later sandbox's mounts serve the host. Missing folders pass
   * (`ensure()` creates them). Checked on every call: a later turn must not inherit the link.
   *
   * @throws SandboxError naming the virtual folder, never the host path.
   */
  async assertRealFolders(): Promise<void> {
    for (const [index, dir] of this.chain.entries()) {
      let info: Awaited<ReturnType<typeof lstat>>;
      try {
        info = await lstat(dir);
      } catch (error) {
        if (isFsError(error, 'ENOENT')) return; // Nothing below a missing folder exists either.
        throw new SandboxError('the thread folders cannot be checked', { cause: error });
      }
      if (info.isSymbolicLink() || !info.isDirectory()) {
        const shown = index < 3 ? 'the thread folder' : this.virtualFolderOf(dir);
        throw new SandboxError(`${shown} is not a real directory (it was replaced, e.g. by a symlink); refusing to use it`);
      }
    }
  }

  private virtualFolderOf(hostDir: string): string {
    if (hostDir === this.userDataDir) return VIRTUAL_USER_DATA;
    return `${VIRTUAL_USER_DATA}/${relative(this.userDataDir, hostDir)}`;
  }

  /**
   * The host folders a sandbox mounts, checked to be real directories first; `skills` only when
   * the skills folder exists (it is mounted read-only).
   *
   * @throws SandboxError as {@link assertRealFolders}.
   */
  async mounts(): Promise<{ workspace: string; uploads: string; outputs: string; skills?: string }> {
    await this.assertRealFolders();
    const skills = await realpath(this.skillsDir).catch(() => undefined);
    return {
      workspace: this.workspaceDir,
      uploads: this.uploadsDir,
      outputs: this.outputsDir,
      ...(skills === undefined ? {} : { skills }),
    };
  }

  /**
   * Hands a file the server wrote inside the thread folders to the sandbox user (no-op without
   * one), so the shell can change it later; with `createdFrom` (what `mkdir(…, { recursive })`
   * returned), also the folders created from there down to the file. Never follows a symlink;
   * a failure leaves the file as it is (the server can still use it).
   */
  async adopt(hostPath: string, createdFrom?: string): Promise<void> {
    if (this.owner === undefined) return;
    if (!hostPath.startsWith(`${this.userDataDir}${sep}`)) return;
    const targets = [hostPath];
    if (createdFrom?.startsWith(`${this.userDataDir}${sep}`)) {
      for (let dir = dirname(hostPath); dir.startsWith(createdFrom); dir = dirname(dir)) targets.push(dir);
    }
    for (const target of targets) await lchown(target, this.owner.uid, this.owner.gid).catch(() => undefined);
  }

  /**
   * Virtual prefixes and host folders, for rewriting a command (virtual → host) and its output
   * (host → virtual). Includes symlink-resolved host folders once `ensure()` has run.
   */
  mappings(): PathMappingEntry[] {
    const entries: PathMappingEntry[] = [
      { virtualPath: VIRTUAL_USER_DATA, hostPath: this.userDataDir },
      { virtualPath: VIRTUAL_SKILLS, hostPath: this.skillsDir },
    ];
    for (const area of ['user-data', 'skills'] as const) {
      const real = this.realRoots.get(area);
      const entry = entries.find((e) => e.virtualPath === (area === 'skills' ? VIRTUAL_SKILLS : VIRTUAL_USER_DATA))!;
      if (real !== undefined && real !== entry.hostPath) entries.push({ virtualPath: entry.virtualPath, hostPath: real });
    }
    return entries;
  }

  /**
   * Maps a path the agent used to a host path inside the thread's folders or the skills folder.
   * Relative paths are taken from `/mnt/user-data/workspace`.
   *
   * @throws SandboxError for paths outside the allowed virtual roots, any `..` segment, a path whose
   *   real location (symlinks followed; for a new file, that of its nearest existing parent) leaves
   *   its root, a dangling symlink, or a write under `/mnt/skills` or `/mnt/user-data` itself.
   */
  async resolveVirtual(virtualPath: string, options: { write: boolean }): Promise<ResolvedPath> {
    const shown = showPath(virtualPath);
    if (virtualPath.trim() === '') throw new SandboxError('path is empty');
    if (virtualPath.includes('\0')) throw new SandboxError(`path ${shown} contains a NUL character`);
    const absolute = virtualPath.startsWith('/') ? virtualPath : `${VIRTUAL_USER_DATA}/workspace/${virtualPath}`;
    if (absolute.split('/').includes('..')) throw new SandboxError(`path ${shown} must not contain '..'`);
    const normalized = posix.normalize(absolute).replace(/(.)\/+$/, '$1');
    const root = this.roots.find((r) => normalized === r.virtualPath || normalized.startsWith(`${r.virtualPath}/`));
    if (root === undefined || (root.area === 'user-data' && normalized !== VIRTUAL_USER_DATA)) {
      throw new SandboxError(`path ${shown} is outside the sandbox; ${ALLOWED_HINT}`);
    }
    if (options.write && !root.isWritable) throw new SandboxError(`path ${shown} is read-only`);
    if (root.area !== 'skills') await this.assertRealFolders();
    const rootReal = await realpathOrNull(root.hostPath, shown);
    if (rootReal === null) throw new SandboxError(`path ${shown} does not exist`);
    const rest = normalized.slice(root.virtualPath.length).split('/').filter(Boolean);
    const hostPath = await this.realLocation(join(rootReal, ...rest), shown);
    if (hostPath !== rootReal && !hostPath.startsWith(rootReal + sep)) {
      throw new SandboxError(`path ${shown} resolves outside the sandbox (through a symlink); ${ALLOWED_HINT}`);
    }
    return { virtualPath: normalized, hostPath, area: root.area };
  }

  /** Real path of `hostPath`, or of its nearest existing parent joined with the missing tail. */
  private async realLocation(hostPath: string, shown: string): Promise<string> {
    let existing = hostPath;
    for (;;) {
      const real = await realpathOrNull(existing, shown);
      if (real !== null) return join(real, relative(existing, hostPath));
      // A link whose target is missing: writing through it would create a file wherever it points.
      if (await existsAsLink(existing)) throw new SandboxError(`path ${shown} goes through a broken symlink`);
      const parent = dirname(existing);
      if (parent === existing) throw new SandboxError(`path ${shown} does not exist`);
      existing = parent;
    }
  }
}

async function realpathOrNull(path: string, shown: string): Promise<string | null> {
  try {
    return await realpath(path);
  } catch (error) {
    if (isFsError(error, 'ENOENT')) return null;
    if (isFsError(error, 'ENOTDIR')) throw new SandboxError(`path ${shown}: a parent is not a directory`);
    if (isFsError(error, 'ELOOP')) throw new SandboxError(`path ${shown} has a symlink loop`);
    throw new SandboxError(`path ${shown} cannot be resolved`, { cause: error });
  }
}

async function existsAsLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** True when `error` is a Node file-system error with this `code`. */
export function isFsError(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
