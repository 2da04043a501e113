import { ensureTemplate, PGLITE_TEMPLATE_DIR } from './pglite.js';

/**
 * `npm install` runs this (postinstall), so that even the first `npm start` on a fresh data dir
 * copies a cluster instead of running PGlite's `initdb`. It never fails the install: without a
 * template the first start makes one.
 */
if (!(await ensureTemplate())) {
  process.stderr.write(`deerflow-channels: could not prepare the PGlite template in ${PGLITE_TEMPLATE_DIR}; the first start will make it\n`);
}
