import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite, type PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { MIGRATIONS_DIR } from '../paths.js';
import { DEFAULT_PGLITE_SHARED_BUFFERS } from './config.js';
import { lockDataDir } from './data-dir-lock.js';
import { openPglite } from './pglite.js';
import { PreparedStatementClient } from './pglite-prepared.js';
import { postgresConnection } from './postgres-url.js';
import * as schema from './schema/index.js';

export { schema };

/** One type for both drivers: repositories never know which database they run on. */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

export interface DatabaseHandle {
  db: Database;
  kind: 'pglite' | 'postgres';
  /** Cheap round trip for /health. */
  ping(): Promise<void>;
  close(): Promise<void>;
}


export interface OpenDatabaseOptions {
  /** postgres:// URL; absent → PGlite. */
  url?: string | undefined;
  /** PGlite data directory; absent → in memory (tests). */
  dataDir?: string | undefined;
  /** Connections in the Postgres pool. */
  maxConnections?: number;
  /** PGlite's `shared_buffers` (`database.pglite_shared_buffers`); default 16MB. */
  sharedBuffers?: string;
}

/** Opens the database and applies pending migrations; both drivers share one migration set. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) {
    const connection = postgresConnection(options.url);
    const connect = (max: number) =>
      postgres(connection.url, { max, onnotice: () => {}, ...(connection.path === undefined ? {} : { path: connection.path }) });
    const client = connect(options.maxConnections ?? 10);
    const db = drizzlePostgres(client, { schema }) as unknown as Database;
    try {
      await migrateOneProcessAtATime(client, connect(1));
    } catch (error) {
      await client.end({ timeout: 1 });
      throw error;
    }
    return {
      db,
      kind: 'postgres',
      ping: async () => void (await db.execute(sql`select 1`)),
      close: () => client.end({ timeout: 5 }),
    };
  }

  const sharedBuffers = options.sharedBuffers ?? DEFAULT_PGLITE_SHARED_BUFFERS;
  if (!options.dataDir) {
    const client = new PGlite({ startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] });
    await client.waitReady;
    return migrated(pgliteDatabase(client));
  }
  // Before PGlite touches the files: a second process on them would corrupt them.
  const lock = lockDataDir(options.dataDir);
  let client: PGlite | undefined;
  try {
    client = await openPglite({ dir: join(options.dataDir, 'pglite'), sharedBuffers });
    const handle = pgliteDatabase(client);
    return await migrated({ ...handle, close: () => handle.close().finally(() => lock.release()) });
  } catch (error) {
    await client?.close().catch(() => undefined);
    lock.release();
    throw error;
  }
}

/**
 * The key of the PostgreSQL advisory lock held while a process migrates: any number of ours,
 * the same in every version (lower 63 bits of sha256("deerflow-channels migrations")); a string,
 * cast by the query, as JavaScript numbers cannot hold it.
 */
const MIGRATION_LOCK_KEY = '7396159076739323939';

/**
 * Applies the pending migrations on `client` while `lock`, a connection of its own, holds
 * {@link MIGRATION_LOCK_KEY}; then closes `lock`. Processes started together on one database
 * (replicas brought up at once) would otherwise all find the same migrations pending and all but
 * one fail with "already exists"; so each waits its turn, then finds nothing left to do.
 */
async function migrateOneProcessAtATime(client: postgres.Sql, lock: postgres.Sql): Promise<void> {
  try {
    await lock`select pg_advisory_lock(${MIGRATION_LOCK_KEY}::bigint)`;
    await migratePostgres(drizzlePostgres(client), { migrationsFolder: MIGRATIONS_DIR });
  } finally {
    // Ending the session releases its lock, also when the migration failed.
    await lock.end({ timeout: 5 });
  }
}

async function migrated(handle: DatabaseHandle): Promise<DatabaseHandle> {
  await migratePglite(handle.db as unknown as PgliteDatabase, { migrationsFolder: MIGRATIONS_DIR });
  return handle;
}

/** Drizzle on an open PGlite, through its statement cache (`db.$client` is the {@link PreparedStatementClient}). */
export function pgliteDatabase(client: PGlite): DatabaseHandle {
  const db = drizzlePglite(new PreparedStatementClient(client) as unknown as PGlite, { schema }) as unknown as Database;
  return {
    db,
    kind: 'pglite',
    ping: async () => void (await db.execute(sql`select 1`)),
    close: () => client.close(),
  };
}

/** SQLSTATE of a driver error; drizzle wraps it, so look at the cause too. */
export function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

export const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';
