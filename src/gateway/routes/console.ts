import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { CONSOLE_DIR } from '../../paths.js';
import { PUBLIC_ROUTE } from '../auth.js';
import type { ZodPluginAsync } from '../validation.js';

/**
 * The console's files (its pages, `/` and the web chat's `/chat`), beside this module's folder in `src/` and in `dist/` alike (the build
 * copies `src/gateway/console` there).
 */
const CONSOLE_FILES = [
  { route: '/', file: 'index.html', contentType: 'text/html; charset=utf-8' },
  { route: '/console.js', file: 'console.js', contentType: 'text/javascript; charset=utf-8' },
  { route: '/console.css', file: 'console.css', contentType: 'text/css; charset=utf-8' },
  { route: '/chat', file: 'chat.html', contentType: 'text/html; charset=utf-8' },
  { route: '/chat.js', file: 'chat.js', contentType: 'text/javascript; charset=utf-8' },
  { route: '/chat.css', file: 'chat.css', contentType: 'text/css; charset=utf-8' },
  { route: '/console/shared.js', file: 'shared.js', contentType: 'text/javascript; charset=utf-8' },
  { route: '/console/markdown.js', file: 'markdown.js', contentType: 'text/javascript; charset=utf-8' },
] as const;

/** marked's browser module, the release the adapters render with: the chat page reads the agent's Markdown with it. */
const MARKED_MODULE = fileURLToPath(import.meta.resolve('marked'));

/** A page module's name: `pages/<name>.js`, served at `/console/<name>`. Anything else in the folder is not served. */
const PAGE_MODULE = /^([a-z][a-z-]{0,39})\.js$/;

/**
 * The console's pages: one module each in `console/pages/`, each served at `/console/<name>`
 * inside the one shell (`page.html`) and at `/console/pages/<name>.js` itself. A new page is a
 * new file there (and its entry in `shared.js`'s `PAGES`), nothing else.
 */
async function pageFiles(): Promise<{ route: string; body: string; contentType: string }[]> {
  const shell = await readFile(join(CONSOLE_DIR, 'page.html'), 'utf8');
  const names = (await readdir(join(CONSOLE_DIR, 'pages'))).flatMap((file) => PAGE_MODULE.exec(file)?.[1] ?? []).sort();
  return (
    await Promise.all(
      names.map(async (name) => [
        { route: `/console/${name}`, body: shell.replaceAll('{{page}}', name), contentType: 'text/html; charset=utf-8' },
        { route: `/console/pages/${name}.js`, body: await readFile(join(CONSOLE_DIR, 'pages', `${name}.js`), 'utf8'), contentType: 'text/javascript; charset=utf-8' },
      ]),
    )
  ).flat();
}

/**
 * Only this origin's script, style and API; no inline script or style, no frames, no plugins, no
 * `<base>` tricks, forms post only here. The page needs nothing else.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // blob: the chat page shows pictures it fetched with the key (a plain URL would not carry it).
  "img-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // The files change with the server; a browser must ask again rather than run an old console.
  'cache-control': 'no-cache',
} as const;

/**
 * `GET /`, `GET /chat`, the pages at `/console/<name>`, and their scripts and style sheets: the web console and its chat (docs/console.md). The files are
 * read once, when the plugin registers; a missing file fails start-up rather than the first visit.
 * Every answer carries a strict content-security-policy and `cache-control: no-cache`.
 *
 * @throws the file system's error when a console file cannot be read.
 */
export const consoleRoutes: ZodPluginAsync = async (app) => {
  const files: { route: string; contentType: string; body: string }[] = await Promise.all(
    CONSOLE_FILES.map(async ({ route, file, contentType }) => ({ route, contentType, body: await readFile(join(CONSOLE_DIR, file), 'utf8') })),
  );
  // Without its source-map comment: the map is not served.
  const marked = (await readFile(MARKED_MODULE, 'utf8')).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
  files.push({ route: '/console/marked.js', contentType: 'text/javascript; charset=utf-8', body: marked });
  for (const { route, body, contentType } of [...files, ...(await pageFiles())]) {
    // A string with a non-JSON content type goes out as is; the serializer never sees it.
    app.get(route, { config: PUBLIC_ROUTE, schema: { response: { 200: z.string().describe(route) } } }, async (_request, reply) =>
      reply.headers(SECURITY_HEADERS).type(contentType).send(body),
    );
  }
};
