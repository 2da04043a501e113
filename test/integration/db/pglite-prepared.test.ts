import { PGlite, type Results, types } from '@electric-sql/pglite';
import { type SQL, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, pgliteDatabase, sqlState, UNIQUE_VIOLATION } from '../../../src/db/index.js';
import type { PreparedStatementClient } from '../../../src/db/pglite-prepared.js';

/**
 * The statement cache PGlite runs behind (src/db/pglite-prepared.ts): the same answers as
 * PGlite's own `query`, each statement text parsed once, a bounded number kept, and no
 * statement ever run inside another caller's transaction.
 */
describe('PGlite behind the statement cache', () => {
  let pglite: PGlite;
  let db: Database;
  let plainDb: Database;

  beforeAll(async () => {
    pglite = new PGlite();
    await pglite.waitReady;
    await pglite.exec(`create table notes (id int primary key, body text not null, meta jsonb, at timestamptz not null default '2026-12-02T10:00:00Z')`);
    db = pgliteDatabase(pglite).db;
    // drizzle on PGlite's own `query`, to compare answers with.
    plainDb = drizzle(pglite) as unknown as Database;
  });
  afterAll(() => pglite.close());

  /** drizzle's `execute` on PGlite answers with PGlite's result: rows, fields, affected rows. */
  const execute = async (database: Database, query: SQL) => (await database.execute(query)) as Results<Record<string, unknown>>;
  const preparedTexts = async () =>
    (await pglite.query<{ statement: string }>('select statement from pg_prepared_statements')).rows.map((row) => row.statement);

  it('answers as PGlite does: rows, types, JSON, timestamps and affected rows', async () => {
    const inserted = await execute(db, sql`insert into notes (id, body, meta) values (${1}, ${'first'}, ${JSON.stringify({ tags: ['a'] })}::jsonb), (${2}, ${'second'}, null) returning id`);
    expect(inserted.rows).toEqual([{ id: 1 }, { id: 2 }]);
    const query = sql`select id, body, meta, at from notes where id >= ${1} order by id`;
    const prepared = await execute(db, query);
    const plain = await execute(plainDb, query);
    expect(prepared.rows).toEqual(plain.rows);
    expect(prepared.rows[0]).toEqual({ id: 1, body: 'first', meta: { tags: ['a'] }, at: '2026-12-02 10:00:00+00' });
    const updated = await execute(db, sql`update notes set body = ${'changed'} where id = ${2}`);
    expect(updated.affectedRows).toBe(1);
  });

  it("gives each column the caller's parser before PGlite's own, in object and array rows", async () => {
    // The cache drizzle talks to (two caches on one PGlite would name their statements alike).
    const client = (db as unknown as { $client: PreparedStatementClient }).$client;
    const text = 'select id, body, meta, at from notes where id = $1';
    const parsers = { [types.INT4]: (value: string) => `int ${value}`, [types.TIMESTAMPTZ]: (value: string) => value };
    for (const rowMode of ['object', 'array'] as const) {
      const prepared = await client.query(text, [1], { rowMode, parsers });
      const plain = await pglite.query(text, [1], { rowMode, parsers });
      expect(prepared.rows).toEqual(plain.rows);
      expect(prepared.fields).toEqual(plain.fields);
    }
    const [row] = (await client.query<unknown[]>(text, [1], { rowMode: 'array', parsers })).rows;
    expect(row).toEqual(['int 1', 'first', { tags: ['a'] }, '2026-12-02 10:00:00+00']);
    // Without the caller's parsers, PGlite's own: an int and a Date.
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1, body: 'first', meta: { tags: ['a'] }, at: new Date('2026-12-02T10:00:00Z') }]);
  });

  it('parses a statement text once, however often it runs', async () => {
    for (let id = 10; id < 15; id++) await execute(db, sql`insert into notes (id, body) values (${id}, ${`note ${id}`})`);
    const texts = (await preparedTexts()).filter((text) => text.startsWith('insert into notes (id, body) values'));
    expect(texts).toHaveLength(1);
  });

  it('keeps at most 256 statements prepared, closing the least recently used', async () => {
    for (let n = 0; n < 300; n++) await execute(db, sql.raw(`select ${n} as n from notes where id = 1`));
    const texts = await preparedTexts();
    expect(texts.length).toBeLessThanOrEqual(256);
    expect(texts).toContain('select 299 as n from notes where id = 1');
    expect(texts).not.toContain('select 0 as n from notes where id = 1');
    expect((await execute(db, sql.raw('select 0 as n from notes where id = 1'))).rows).toEqual([{ n: 0 }]);
  });

  it('reports a failed statement with its SQLSTATE, and the statement works again after', async () => {
    const insert = (id: number) => db.execute(sql`insert into notes (id, body) values (${id}, ${'again'})`);
    await insert(20);
    const error = await insert(20).catch((e: unknown) => e);
    expect(sqlState(error)).toBe(UNIQUE_VIOLATION);
    await insert(21);
    expect((await execute(db, sql`select count(*)::int as n from notes where id in (${20}, ${21})`)).rows).toEqual([{ n: 2 }]);
  });

  it('reports a statement that does not parse, and caches nothing for it', async () => {
    const error = await execute(db, sql.raw('select from where')).catch((e: unknown) => e);
    expect(sqlState(error)).toBe('42601');
    expect(await preparedTexts()).not.toContain('select from where');
  });

  it('prepares a statement again when the table under it changed', async () => {
    const all = sql`select * from notes where id = ${1}`;
    expect(Object.keys((await execute(db, all)).rows[0] as object)).toEqual(['id', 'body', 'meta', 'at']);
    await pglite.exec('alter table notes add column extra text');
    expect(Object.keys((await execute(db, all)).rows[0] as object)).toEqual(['id', 'body', 'meta', 'at', 'extra']);
  });

  it('never runs a statement inside another caller’s transaction: a write made meanwhile outlives its rollback', async () => {
    let inside!: () => void;
    const insideTransaction = new Promise<void>((resolve) => {
      inside = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transaction = db
      .transaction(async (tx) => {
        await tx.execute(sql`insert into notes (id, body) values (${30}, ${'rolled back'})`);
        inside();
        await released;
        throw new Error('roll back');
      })
      .catch((error: Error) => error.message);
    await insideTransaction;
    // drizzle starts a query when it is awaited: `then` sends it now.
    const outside = db.execute(sql`insert into notes (id, body) values (${31}, ${'kept'})`).then(() => undefined);
    // Past every microtask the outside statement takes to reach PGlite, were nothing holding it back.
    await new Promise((resolve) => setImmediate(resolve));
    release();
    expect(await transaction).toBe('roll back');
    await outside;
    expect((await execute(db, sql`select id from notes where id in (${30}, ${31}) order by id`)).rows).toEqual([{ id: 31 }]);
  });

  it('reports an error of the stale-plan kind from a freshly prepared statement instead of preparing it again and again', async () => {
    await pglite.exec(`create function refuses() returns int language plpgsql as $$ begin raise sqlstate '0A000' using message = 'not here'; end $$`);
    const error = await execute(db, sql`select refuses() as n where ${1} = 1`).catch((e: unknown) => e);
    expect(sqlState(error)).toBe('0A000');
  });

  it('says the database is closed to a statement that comes after the close', async () => {
    const closing = new PGlite();
    await closing.waitReady;
    const closed = pgliteDatabase(closing).db;
    await closed.execute(sql`select ${1}::int as n`);
    await closing.close();
    const error = await Promise.resolve(closed.execute(sql`select ${1}::int as n`)).catch((e: unknown) => e);
    // drizzle names the failed query; the cause is PGlite's own words.
    expect((error as Error).cause).toMatchObject({ message: 'PGlite is closed' });
  });

  it('commits what a transaction wrote through prepared statements, and rolls it back on failure', async () => {
    await db.transaction(async (tx) => {
      await tx.execute(sql`insert into notes (id, body) values (${40}, ${'committed'})`);
      await tx.execute(sql`update notes set body = ${'committed twice'} where id = ${40}`);
    });
    await db
      .transaction(async (tx) => {
        await tx.execute(sql`insert into notes (id, body) values (${41}, ${'never'})`);
        await tx.execute(sql`insert into notes (id, body) values (${40}, ${'duplicate'})`);
      })
      .catch(() => undefined);
    expect((await execute(db, sql`select id, body from notes where id in (${40}, ${41}) order by id`)).rows).toEqual([{ id: 40, body: 'committed twice' }]);
  });
});
