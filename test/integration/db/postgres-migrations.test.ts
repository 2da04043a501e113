import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, openDatabase } from '../../../src/db/index.js';
import { MIGRATIONS_DIR } from '../../../src/paths.js';
import { createTestDatabaseUrl } from '../../helpers/database.js';

/**
 * Server replicas brought up together (`docker compose up --scale server=3`, docs/deploy.md)
 * each apply the migrations at start, on one fresh PostgreSQL database.
 */

const databaseUrl = process.env.DATABASE_URL || undefined;
const PROCESSES = 4;

describe.skipIf(!databaseUrl)('migrations on PostgreSQL', () => {
  let database: { url: string; drop: () => Promise<void> };
  const handles: DatabaseHandle[] = [];

  beforeAll(async () => {
    database = await createTestDatabaseUrl();
  });
  afterAll(async () => {
    await Promise.allSettled(handles.map((handle) => handle.close()));
    await database?.drop();
  });

  it('are applied once when several processes start on a fresh database at the same moment', async () => {
    const opened = await Promise.allSettled(Array.from({ length: PROCESSES }, () => openDatabase({ url: database.url, maxConnections: 2 })));
    for (const result of opened) if (result.status === 'fulfilled') handles.push(result.value);
    expect(opened.map((result) => (result.status === 'rejected' ? String(result.reason) : 'opened'))).toEqual(opened.map(() => 'opened'));

    const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta/_journal.json'), 'utf8')) as { entries: unknown[] };
    const result = await (handles[0] as DatabaseHandle).db.execute(sql`select count(*)::int as applied from drizzle.__drizzle_migrations`);
    const [row] = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { applied: number }[];
    expect(row?.applied).toBe(journal.entries.length);
  });
});
