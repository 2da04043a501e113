import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder the server runs from: the checkout, or the self-contained `dist/` of `npm run build`.
 * This file sits one level below it in all three ways the server runs: `src/paths.ts` (tests,
 * tsx), `dist/src/paths.js` (`npm run start:dist`), and `.build/*.mjs`, the bundle `npm start`
 * makes. So every file the server reads beside its code is found from here, and nowhere else.
 */
export const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));

export const MIGRATIONS_DIR = join(PACKAGE_ROOT, 'migrations');
export const DEFAULT_AGENTS_DIR = join(PACKAGE_ROOT, 'agents');
export const DEFAULT_SKILLS_DIR = join(PACKAGE_ROOT, 'skills');
export const CONSOLE_DIR = join(PACKAGE_ROOT, 'src', 'gateway', 'console');
export const PACKAGE_MANIFEST = join(PACKAGE_ROOT, 'package.json');

/** Every file and folder above: what `npm run build` copies beside the compiled code (deploy/build.ts). */
export const RUNTIME_FILES = [MIGRATIONS_DIR, DEFAULT_AGENTS_DIR, DEFAULT_SKILLS_DIR, CONSOLE_DIR, PACKAGE_MANIFEST] as const;
