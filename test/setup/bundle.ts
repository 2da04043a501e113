import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Builds the bundle `npm start` and `npm run cli` run (`.build/main.mjs`, `.build/cli.mjs`), once
 * per test run, so the end-to-end tests start the server exactly as a user does, from the
 * current sources.
 */
export default function setup(): void {
  execFileSync('npm', ['run', '--silent', 'bundle'], { cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: 'inherit' });
}
