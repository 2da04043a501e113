/**
 * `npm run build [-- --out-dir <dir>]`: the self-contained compiled server, `node <dir>/src/main.js`,
 * that the container image and a systemd unit run (docs/deploy.md). tsc compiles src/ and
 * channels/ into `<dir>` (default `dist/`, emptied first), and the files the server reads beside
 * its code (`RUNTIME_FILES` of src/paths.ts) are copied to the same places under it. A test builds
 * into a folder of its own, so it never replaces a dist/ in use.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PACKAGE_ROOT, RUNTIME_FILES } from '../src/paths.js';

const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
const outDir = values['out-dir'] === undefined ? join(PACKAGE_ROOT, 'dist') : resolve(values['out-dir']);
// It is emptied first: never the checkout itself or a folder holding it.
if (!relative(outDir, PACKAGE_ROOT).startsWith('..')) {
  process.stderr.write(`build: --out-dir ${outDir} holds the checkout; name a folder of its own\n`);
  process.exit(2);
}

rmSync(outDir, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', outDir], { cwd: PACKAGE_ROOT, stdio: 'inherit' });
for (const source of RUNTIME_FILES) cpSync(source, join(outDir, relative(PACKAGE_ROOT, source)), { recursive: true });
