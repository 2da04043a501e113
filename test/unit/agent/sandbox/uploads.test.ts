import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SandboxError, SandboxPaths } from '../../../../src/agent/sandbox/paths.js';
import { sanitizeFileName, saveUploads } from '../../../../src/agent/sandbox/uploads.js';

let root: string;
let paths: SandboxPaths;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dfc-sandbox-uploads-')));
  paths = new SandboxPaths({ dataDir: join(root, 'data'), skillsDir: join(root, 'skills'), userId: 'u1', threadId: 't-1' });
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

const bytes = (text: string) => new TextEncoder().encode(text);
const file = (name: string, content = name, isImage = false) => ({ name, bytes: bytes(content), isImage });
const uploaded = (name: string) => readFileSync(join(paths.uploadsDir, name), 'utf8');

describe('sanitizeFileName', () => {
  const longName = `${'é'.repeat(150)}.txt`; // 304 UTF-8 bytes, 154 characters
  it.each([
    ['report.pdf', 'report.pdf'],
    ['../../etc/passwd', 'passwd'],
    ['/abs/path/notes.md', 'notes.md'],
    ['  spaced name.txt  ', 'spaced name.txt'],
    ['bell\u0007\nname\u0000.txt', 'bellname.txt'],
    ['invoice\u202Efdp.exe', 'invoicefdp.exe'],
    ['.env', '.env'],
    ['', 'fallback.bin'],
    ['.', 'fallback.bin'],
    ['..', 'fallback.bin'],
    ['dir/', 'fallback.bin'],
    ['dir/..', 'fallback.bin'],
    ['C:\\Users\\me\\secret.txt', 'fallback.bin'],
    ['a\\b', 'fallback.bin'],
    [longName, 'fallback.bin'],
    [`${'a'.repeat(251)}.txt`, `${'a'.repeat(251)}.txt`],
    [`${'a'.repeat(252)}.txt`, 'fallback.bin'],
  ])('%j → %j', (name, expected) => {
    expect(sanitizeFileName(name, 'fallback.bin')).toBe(expected);
  });

  it('refuses an unsafe fallback', () => {
    expect(() => sanitizeFileName('..', '../x')).toThrow(RangeError);
  });
});

describe('saveUploads', () => {
  it('creates the thread folders and writes each file under its sanitized name', async () => {
    const saved = await saveUploads(paths, [file('../../etc/passwd', 'not really'), file('photo.png', 'PNG', true)]);
    expect(saved).toEqual([
      { filename: 'passwd', size: 10, path: '/mnt/user-data/uploads/passwd', is_image: false },
      { filename: 'photo.png', size: 3, path: '/mnt/user-data/uploads/photo.png', is_image: true },
    ]);
    expect(uploaded('passwd')).toBe('not really');
    expect(readdirSync(paths.uploadsDir).sort()).toEqual(['passwd', 'photo.png']);
    expect(readdirSync(root)).toEqual(['data']);
  });

  it('names unusable files upload-<n> by their place in the batch, .png for images', async () => {
    const saved = await saveUploads(paths, [file('ok.txt'), file('..', 'a'), file('', 'b', true), file('x\\y', 'c')]);
    expect(saved.map((s) => s.filename)).toEqual(['ok.txt', 'upload-2.bin', 'upload-3.png', 'upload-4.bin']);
  });

  it('numbers collisions within one batch and with files already there', async () => {
    await saveUploads(paths, [file('report.pdf', 'first')]);
    const saved = await saveUploads(paths, [
      file('report.pdf', 'second'),
      file('dir/report.pdf', 'third'),
      file('archive.tar.gz', 'gz'),
      file('archive.tar.gz', 'gz again'),
      file('.env', 'dot'),
      file('.env', 'dot again'),
    ]);
    expect(saved.map((s) => s.filename)).toEqual([
      'report_1.pdf',
      'report_2.pdf',
      'archive.tar.gz',
      'archive.tar_1.gz',
      '.env',
      '.env_1',
    ]);
    expect([uploaded('report.pdf'), uploaded('report_1.pdf'), uploaded('report_2.pdf')]).toEqual(['first', 'second', 'third']);
  });

  it('keeps a numbered name within 255 bytes', async () => {
    const name = `${'a'.repeat(251)}.txt`;
    const [first, second] = await saveUploads(paths, [file(name, '1'), file(name, '2')]);
    expect(first?.filename).toBe(name);
    expect(second?.filename).toBe(`${'a'.repeat(249)}_1.txt`);
    expect(Buffer.byteLength(second?.filename ?? '')).toBe(255);
    expect(uploaded(second?.filename ?? '')).toBe('2');
  });

  it('neither follows nor overwrites a symlink planted at the destination', async () => {
    await paths.ensure();
    const outside = join(root, 'outside.txt');
    writeFileSync(outside, 'precious');
    symlinkSync(outside, join(paths.uploadsDir, 'notes.txt'));
    symlinkSync(join(root, 'missing.txt'), join(paths.uploadsDir, 'dangling.txt'));
    const saved = await saveUploads(paths, [file('notes.txt', 'upload'), file('dangling.txt', 'upload 2')]);
    expect(saved.map((s) => s.filename)).toEqual(['notes_1.txt', 'dangling_1.txt']);
    expect(readFileSync(outside, 'utf8')).toBe('precious');
    expect(lstatSync(join(paths.uploadsDir, 'notes.txt')).isSymbolicLink()).toBe(true);
    expect(readdirSync(root).sort()).toEqual(['data', 'outside.txt']);
    expect(uploaded('notes_1.txt')).toBe('upload');
  });

  it('refuses an uploads folder that is a symlink, writing nothing', async () => {
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(paths.userDataDir, { recursive: true });
    symlinkSync(elsewhere, paths.uploadsDir);
    await expect(saveUploads(paths, [file('a.txt')])).rejects.toBeInstanceOf(SandboxError);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('saves an empty batch as nothing', async () => {
    expect(await saveUploads(paths, [])).toEqual([]);
  });
});
