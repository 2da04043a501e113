import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { closedPort } from '../helpers/closed-port.js';
import { openPage, screenshot, signIn, useConsoleBrowser } from './console-browser.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The console's Health page in a real headless Chromium against the real server: the operator
 * sees each channel's state (the web chat running, Telegram refused), the models table as the
 * first check is under way and once it ended, and presses **Check models now**. Elements are found
 * by role and name, as assistive technology finds them.
 */

const ADMIN_TOKEN = 'e2e-operator-token-health-0123456789';
const KEY = 'sk-e2e-console-health-0123456789';

let telegram: FakeTelegram;
let model: FakeOpenAI;
let server: ServerProcess;
const browser = useConsoleBrowser(() => server?.url ?? '');
let releaseModelRoutes: () => void;

/** A fresh browser profile, signed in with the operator token, on the Health page. */
async function openHealthPage(): Promise<{ page: Page }> {
  const { page } = await openPage(browser(), `${server.url}/`);
  await signIn(page, ADMIN_TOKEN);
  await page.getByRole('link', { name: 'Health' }).click();
  await page.getByRole('heading', { name: 'Health' }).waitFor();
  return { page };
}

/** The row of table `caption` whose first cell is exactly `name`. */
function row(page: Page, caption: string, name: string) {
  return page.getByRole('table', { name: caption }).getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });
}

/** The row's cells' text, in order. */
async function cells(page: Page, caption: string, name: string): Promise<string[]> {
  return row(page, caption, name).getByRole('cell').allTextContents();
}

describe('console: Health page', () => {
  beforeAll(async () => {
    telegram = new FakeTelegram();
    telegram.rejectToken = true;
    model = new FakeOpenAI({ apiKey: KEY, models: ['gpt-4o-mini'] });
    await Promise.all([telegram.start(), model.start()]);
    // The start's model check stays under way until the test lets the fake answer.
    releaseModelRoutes = model.holdModelRoutes();
    const port = await closedPort();
    const config = writeConfig(`server: { port: 0 }
auth: { admin_token: "${ADMIN_TOKEN}" }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: ${KEY} }
  - { name: wrong-key, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e-not-the-key-abcdefghij }
  - { name: offline, model: gpt-4o-mini, base_url: "http://127.0.0.1:${port}/v1", api_key: ${KEY} }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`);
    server = await startServerProcess(['--config', config.path]);
  });
  afterAll(async () => {
    releaseModelRoutes?.();
    await server?.stop();
    await Promise.all([telegram?.stop(), model?.stop()]);
  });

  it('shows each channel’s state and each model’s check; Check models now redraws the table', async () => {
    const { page } = await openHealthPage();

    // Channels: the web chat runs; Telegram refused the token, and the page says why.
    await row(page, 'Channels', 'web').getByRole('cell', { name: 'Running', exact: true }).waitFor();
    await row(page, 'Channels', 'telegram').getByRole('cell', { name: /^Not running: .*401/ }).waitFor({ timeout: 30_000 });

    // The first check is under way: every model reads Checking…, and the server is healthy meanwhile.
    expect(await cells(page, 'Models', 'default')).toEqual(['default', 'Checking…', '', 'Not yet']);
    expect(await page.getByText('The server is healthy.').isVisible()).toBe(true);

    const checkNow = page.getByRole('button', { name: 'Check models now' });
    await checkNow.click();
    // The press joins the check under way; the button waits with it.
    await page.getByRole('status').getByText('Checking the models…').waitFor();
    expect(await checkNow.isDisabled()).toBe(true);
    releaseModelRoutes();

    await page.getByRole('status').getByText(/^Models checked at /).waitFor();
    expect(await checkNow.isEnabled()).toBe(true);
    const [, defaultState, , defaultChecked] = await cells(page, 'Models', 'default');
    expect(defaultState).toBe('Reachable, key accepted, model found');
    expect(defaultChecked).not.toBe('Not yet');
    expect((await cells(page, 'Models', 'wrong-key'))[1]).toBe('The model service refused the key');
    expect((await cells(page, 'Models', 'offline'))[1]).toMatch(/^Unreachable: .*connection refused/);
    // Failing models are shown, not counted against the server's health.
    expect(await page.getByText('The server is healthy.').isVisible()).toBe(true);
    // The page never shows a key.
    expect(await page.locator('body').textContent()).not.toContain('sk-e2e');
    await screenshot(page, 'health');
  });
});
