/**
 * Throwaway databases for tests, each migrated and isolated from every other.
 *
 * ```ts
 * describe.each(testDatabaseKinds())('thread map on %s', (kind) => {
 *   let database: DatabaseHandle;
 *   beforeAll(async () => { database = await openTestDatabase(kind); });
 *   afterAll(() => database.close());
 * });
 * ```
 */
import { randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';
import { type DatabaseHandle, openDatabase, pgliteDatabase } from '../../src/db/index.js';
import type { PreparedStatementClient } from '../../src/db/pglite-prepared.js';

export type TestDatabaseKind = DatabaseHandle['kind'];

/** The URL of the Postgres server tests may use; tests never read any other setting. */
const serverUrl = process.env.DATABASE_URL || undefined;

/** `['pglite']`, plus `'postgres'` when `DATABASE_URL` is set: run a suite once per kind with `describe.each`. */
export function testDatabaseKinds(): TestDatabaseKind[] {
  return serverUrl ? ['pglite', 'postgres'] : ['pglite'];
}

/**
 * Opens an empty, migrated database of `kind` (default: Postgres when `DATABASE_URL` is set,
 * else PGlite). PGlite runs in memory. Postgres gets a new database `dfc_test_<random>` on the
 * `DATABASE_URL` server, created through the URL's own database; `close()` drops it again.
 * Always `close()` it (in `afterAll`/`afterEach`): a crashed run leaves `dfc_test_*` databases.
 *
 * @throws when `kind` is `'postgres'` and `DATABASE_URL` is not set.
 */
export async function openTestDatabase(kind: TestDatabaseKind = serverUrl ? 'postgres' : 'pglite'): Promise<DatabaseHandle> {
  if (kind === 'pglite') return openPglite();
  if (!serverUrl) throw new Error('openTestDatabase("postgres") needs DATABASE_URL');
  return openPostgres(serverUrl);
}

/** A migrated PGlite data directory, made once per test process. */
let pgliteTemplate: Promise<Blob> | undefined;

/**
 * Starting PGlite and migrating takes ~1.5 s on two cores; loading a dump of an already migrated
 * instance takes ~0.4 s. The template is made by `openDatabase`, so it has exactly its migrations;
 * the handle below mirrors `openDatabase`'s PGlite branch.
 */
async function openPglite(): Promise<DatabaseHandle> {
  pgliteTemplate ??= dumpMigratedPglite().catch((error: unknown) => {
    pgliteTemplate = undefined;
    throw error;
  });
  const client = new PGlite({ loadDataDir: await pgliteTemplate });
  await client.waitReady;
  return pgliteDatabase(client);
}

async function dumpMigratedPglite(): Promise<Blob> {
  const handle = await openDatabase({});
  try {
    return await (handle.db as unknown as { $client: PreparedStatementClient }).$client.pglite.dumpDataDir('none');
  } finally {
    await handle.close();
  }
}

async function openPostgres(url: string): Promise<DatabaseHandle> {
  // Lower-case hex only, so the name needs no quoting.
  const name = `dfc_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await asAdmin(url, (admin) => admin.unsafe(`create database ${name}`));
  const testUrl = new URL(url);
  testUrl.pathname = `/${name}`;
  let handle: DatabaseHandle;
  try {
    handle = await openDatabase({ url: testUrl.toString(), maxConnections: 4 });
  } catch (error) {
    await dropDatabase(url, name);
    throw error;
  }
  return {
    ...handle,
    close: async () => {
      try {
        await handle.close();
      } finally {
        await dropDatabase(url, name);
      }
    },
  };
}

/**
 * An empty database `dfc_test_<random>` on the `DATABASE_URL` server, for a server process to
 * migrate and use (several processes may share it). `drop()` removes it.
 *
 * @throws when `DATABASE_URL` is not set.
 */
export async function createTestDatabaseUrl(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!serverUrl) throw new Error('createTestDatabaseUrl needs DATABASE_URL');
  const url = serverUrl;
  const name = `dfc_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  await asAdmin(url, (admin) => admin.unsafe(`create database ${name}`));
  const testUrl = new URL(url);
  testUrl.pathname = `/${name}`;
  return { url: testUrl.toString(), drop: () => dropDatabase(url, name) };
}

async function dropDatabase(url: string, name: string): Promise<void> {
  await asAdmin(url, async (admin) => {
    // DROP DATABASE fails while anyone is connected, e.g. a pool a test forgot to close.
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
    await admin.unsafe(`drop database if exists ${name}`);
  });
}

/** One short-lived connection to the URL's own database; never left open to hold a worker alive. */
async function asAdmin<T>(url: string, work: (admin: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await work(admin);
  } finally {
    await admin.end({ timeout: 5 });
  }
}
