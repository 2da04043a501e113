import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureTemplate, openPglite } from '../../../src/db/pglite.js';

/**
 * A new data dir gets its cluster as a copy of a per-version template, made once by `initdb` in a
 * child process. These run against a template folder of their own, so the shared one is untouched.
 */
describe('PGlite clusters from a template', () => {
  const root = mkdtempSync(join(tmpdir(), 'dfc-pglite-'));
  const templateDir = join(root, 'cache', 'pglite-template');
  const open: PGlite[] = [];
  afterAll(async () => {
    await Promise.all(open.map((client) => client.close()));
    rmSync(root, { recursive: true, force: true });
  });

  const openAt = async (name: string, sharedBuffers = '16MB') => {
    const client = await openPglite({ dir: join(root, name, 'pglite'), sharedBuffers, templateDir });
    open.push(client);
    return client;
  };

  it('makes the template on the first start, concurrent first starts included, and leaves no half-made folder', async () => {
    const [a, b] = await Promise.all([openAt('a'), openAt('b')]);
    expect(existsSync(join(templateDir, 'PG_VERSION'))).toBe(true);
    for (const client of [a, b]) expect((await client.query<{ n: number }>('select 1 + 1 as n')).rows).toEqual([{ n: 2 }]);
    expect(readdirSync(join(root, 'cache'))).toEqual(['pglite-template']);
    expect(readdirSync(join(root, 'a')).filter((name) => name.includes('.tmp-'))).toEqual([]);
  });

  it('copies the template into the next new data dir without touching it, and keeps the databases apart', async () => {
    const before = statSync(join(templateDir, 'PG_VERSION')).mtimeMs;
    const c = await openAt('c');
    await c.exec('create table notes (body text); insert into notes values ($$only in c$$)');
    const d = await openAt('d');
    expect((await d.query("select to_regclass('notes') as notes")).rows).toEqual([{ notes: null }]);
    expect(statSync(join(templateDir, 'PG_VERSION')).mtimeMs).toBe(before);
    expect((await c.query('select body from notes')).rows).toEqual([{ body: 'only in c' }]);
  });

  it('reopens an existing data dir as it is, with the shared_buffers asked for', async () => {
    const first = await openAt('e');
    await first.exec('create table kept (n int); insert into kept values (7)');
    await first.close();
    open.splice(open.indexOf(first), 1);
    const again = await openAt('e', '8MB');
    expect((await again.query('select n from kept')).rows).toEqual([{ n: 7 }]);
    expect((await again.query('show shared_buffers')).rows).toEqual([{ shared_buffers: '8MB' }]);
  });

  it('takes an empty data folder left behind (a crash before the copy) as new', async () => {
    mkdirSync(join(root, 'f', 'pglite'), { recursive: true });
    const f = await openAt('f');
    expect((await f.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('says so when no template can be written, and the cluster is made in place instead', async () => {
    const unwritable = join(root, 'a-file');
    // A file where the template's parent folder should be: mkdir fails as on a read-only install.
    rmSync(unwritable, { force: true });
    writeFileSync(unwritable, '');
    expect(await ensureTemplate(join(unwritable, 'pglite-x'))).toBe(false);
    const client = await openPglite({ dir: join(root, 'g', 'pglite'), sharedBuffers: '16MB', templateDir: join(unwritable, 'pglite-x') });
    open.push(client);
    expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});
