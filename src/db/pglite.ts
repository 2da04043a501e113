import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

/** The file `initdb` writes last; a folder without it holds no usable database. */
const CLUSTER_MARKER = 'PG_VERSION';

const PGLITE_PACKAGE_DIR = dirname(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')));
const PGLITE_VERSION = (JSON.parse(readFileSync(join(PGLITE_PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * Where the pristine cluster of this PGlite version is kept: `node_modules/.cache/` beside the
 * package that made it, the folder build tools keep their caches in. A PGlite upgrade brings a
 * new version, so a cluster is never reused across versions.
 */
export const PGLITE_TEMPLATE_DIR = join(PGLITE_PACKAGE_DIR, '..', '..', '.cache', 'deerflow-channels', `pglite-${PGLITE_VERSION}`);

export interface OpenPgliteOptions {
  /** `data_dir/pglite`; created with a new cluster when it holds none. */
  dir: string;
  /** `shared_buffers`, e.g. `16MB`. */
  sharedBuffers: string;
  /** Folder of the pristine cluster copied into new data dirs; default {@link PGLITE_TEMPLATE_DIR}. */
  templateDir?: string;
}

/**
 * Opens PGlite on `dir`, first giving it a cluster when it has none.
 *
 * `initdb` is what makes a first start slow and heavy: about 3 s, and it leaves ~450 MiB of
 * WebAssembly heap behind in the process that ran it. So it runs once per PGlite version, in a
 * short-lived child process, into a template folder; every new data dir is a copy of that
 * template (a cleanly shut-down cluster is plain files), which takes a fraction of a second.
 * When the template cannot be written (read-only install), the child initialises `dir` itself.
 */
export async function openPglite(options: OpenPgliteOptions): Promise<PGlite> {
  if (!existsSync(join(options.dir, CLUSTER_MARKER))) await provisionCluster(options.dir, options.templateDir ?? PGLITE_TEMPLATE_DIR);
  const client = new PGlite(options.dir, { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${options.sharedBuffers}`] });
  await client.waitReady;
  return client;
}

/** Makes sure the template holds a cluster; resolves once it does (or once it is known it can't). */
export async function ensureTemplate(templateDir: string = PGLITE_TEMPLATE_DIR): Promise<boolean> {
  if (existsSync(join(templateDir, CLUSTER_MARKER))) return true;
  // Concurrent first starts (a test run, several servers) each build their own and the first rename wins.
  const building = `${templateDir}.tmp-${randomUUID()}`;
  try {
    await mkdir(dirname(templateDir), { recursive: true });
    await initdbInChild(building);
    await rename(building, templateDir).catch(async (error: NodeJS.ErrnoException) => {
      if (!existsSync(join(templateDir, CLUSTER_MARKER))) throw error;
    });
    return true;
  } catch {
    return false;
  } finally {
    await rm(building, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function provisionCluster(dir: string, templateDir: string): Promise<void> {
  await removeIfEmpty(dir);
  if (existsSync(dir)) return; // not empty and no cluster: PGlite reports what it finds there
  await mkdir(dirname(dir), { recursive: true });
  // Copied beside and renamed into place, so a crash mid-copy never leaves half a cluster at `dir`.
  const copying = `${dir}.tmp-${randomUUID()}`;
  try {
    if (await ensureTemplate(templateDir)) await cp(templateDir, copying, { recursive: true });
    else await initdbInChild(copying);
    await rename(copying, dir);
  } finally {
    await rm(copying, { recursive: true, force: true });
  }
}

async function removeIfEmpty(dir: string): Promise<void> {
  const entries = await readdir(dir).catch(() => undefined);
  if (entries !== undefined && entries.length === 0) await rmdir(dir);
}

/** Runs PGlite's `initdb` into `dir` in a child process, whose exit returns all the memory it took. */
function initdbInChild(dir: string): Promise<void> {
  const pgliteEntry = pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite')).href.replace(/\.cjs$/, '.js');
  const script = `const { PGlite } = await import(${JSON.stringify(pgliteEntry)}); const db = new PGlite(process.argv[1]); await db.waitReady; await db.close();`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '--eval', script, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0 && existsSync(join(dir, CLUSTER_MARKER))) resolve();
      else reject(new Error(`PGlite initdb exited with ${code}: ${stderr.trim().slice(-500)}`));
    });
  });
}
