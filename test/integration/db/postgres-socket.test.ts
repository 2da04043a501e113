import { existsSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/db/index.js';

/** `database.url` in libpq's socket form reaches PostgreSQL over its Unix-domain socket, not TCP. */

const tcpUrl = process.env.DATABASE_URL || undefined;
const SOCKET_DIR = '/var/run/postgresql';
const hasSocket = existsSync(`${SOCKET_DIR}/.s.PGSQL.5432`);

describe.skipIf(!tcpUrl || !hasSocket)('PostgreSQL over a Unix-domain socket', () => {
  it('connects, migrates and answers, with no server address (not TCP)', async () => {
    const { username, pathname } = new URL(tcpUrl as string);
    const database = await openDatabase({ url: `postgres://${username}@${pathname}?host=${SOCKET_DIR}` });
    try {
      const result = await database.db.execute(sql`select inet_server_addr() as address, current_database() as name`);
      const [row] = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { address: string | null; name: string }[];
      expect(row).toEqual({ address: null, name: pathname.slice(1) });
    } finally {
      await database.close();
    }
  });
});
