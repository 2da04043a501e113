import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

/**
 * The console's browser tests' harness: a real headless Chromium, a fresh profile per page that
 * records what it requests and every script error and CSP violation, sign-in as a person does it,
 * and the screenshots docs/console.md shows. A test file calls `useConsoleBrowser(origin)` once at
 * its top level and opens pages with `openPage`; after each test they are closed, and each must
 * have asked nothing of another origin and met no script error or CSP violation.
 */

/** Debian's package (`.ci/run` installs it); playwright-core brings no browser of its own. */
export const CHROMIUM = '/usr/bin/chromium';

const IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));

export function launchConsoleBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/**
 * Chromium for the file's tests: launched before them, closed after them; after each test every
 * page it opened is closed and checked (`closeAll`). The browser is there from the first test on.
 */
export function useConsoleBrowser(origin: () => string): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchConsoleBrowser();
  });
  afterEach(() => closeAll(origin()));
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (browser === undefined) throw new Error('Chromium is not launched yet: open pages in tests, not at import');
    return browser;
  };
}

/** A fresh browser profile (empty sessionStorage) and what its page did. */
export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Every request the page made, in order. */
  requests: { method: string; url: string }[];
  /** Uncaught script errors and CSP violations. */
  pageErrors: string[];
}

const opened: ConsolePage[] = [];

/** A fresh profile at `url`, recording its requests, script errors and CSP violations. */
export async function openPage(browser: Browser, url: string, options: { viewport?: { width: number; height: number } } = {}): Promise<ConsolePage> {
  const context = await browser.newContext(options.viewport === undefined ? {} : { viewport: options.viewport });
  const page = await context.newPage();
  const consolePage: ConsolePage = { page, context, requests: [], pageErrors: [] };
  opened.push(consolePage);
  page.on('request', (request) => consolePage.requests.push({ method: request.method(), url: request.url() }));
  page.on('pageerror', (error) => consolePage.pageErrors.push(error.message));
  // CSP violations are reported on the console only.
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) consolePage.pageErrors.push(message.text());
  });
  await page.goto(url);
  return consolePage;
}

/** Signs in on the sign-in form with `key`; Enter submits it (signing in needs no mouse). */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByLabel('API key').press('Enter');
}

/** A fresh profile signed in with `key` at `origin`, then at `origin + path`. */
export async function openSignedIn(
  browser: Browser,
  origin: string,
  key: string,
  path: string,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<Page> {
  const { page } = await openPage(browser, `${origin}/`, options);
  await signIn(page, key);
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await page.goto(`${origin}${path}`);
  return page;
}

/**
 * Closes every page opened since the last call. Each asked nothing of another origin (no CDN,
 * fonts or analytics), and nothing was blocked by the CSP or thrown by a script.
 */
export async function closeAll(origin: string): Promise<void> {
  for (const { context, requests, pageErrors } of opened.splice(0)) {
    await context.close();
    expect(requests.filter(({ url }) => new URL(url).origin !== origin)).toEqual([]);
    expect(pageErrors).toEqual([]);
  }
}

/** The aria-live status line, where the page reports every outcome. */
export async function statusText(page: Page): Promise<string> {
  return (await page.getByRole('status').textContent()) ?? '';
}

/** The table rows (not the header) of the table captioned `caption`, each as its cells' texts. */
export async function rowsOf(page: Page, caption: string): Promise<string[][]> {
  const rows = await page.getByRole('table', { name: caption }).locator('tbody tr').all();
  return Promise.all(rows.map(async (row) => (await row.locator('td').allTextContents()).map((text) => text.trim())));
}

/** With `UPDATE_SCREENSHOTS=1`, the page as it is now goes to docs/images/console-<name>.png (docs/console.md shows it). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS !== '1') return;
  mkdirSync(IMAGES, { recursive: true });
  await page.screenshot({ path: `${IMAGES}console-${name}.png`, fullPage: true });
}
