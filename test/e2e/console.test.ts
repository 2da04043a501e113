import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { type ConsolePage, openPage, screenshot, signIn, statusText, useConsoleBrowser } from './console-browser.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The web console in a real headless Chromium against the real server: an operator creates a
 * user, grants or revokes their shell, disables, enables, re-keys and deletes users; the user connects Telegram through the fake Bot API and
 * disconnects it again. Every
 * assertion is about what the page or the chat shows; elements are found by role and label, as
 * assistive technology finds them.
 */

const ADMIN_TOKEN = 'e2e-operator-token-0123456789';
const BOT_USERNAME = 'test_bot';
const REJECTED = 'That key was not accepted.';

let telegram: FakeTelegram;
let model: FakeOpenAI;
let server: ServerProcess;
const browser = useConsoleBrowser(() => server?.url ?? '');

function configYaml(): string {
  return `server: { port: 0 }
auth: { admin_token: "${ADMIN_TOKEN}" }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
channel_connections:
  enabled: true
  telegram: { enabled: true, bot_username: ${BOT_USERNAME} }
`;
}

/** A fresh browser profile per test (empty sessionStorage), recording every URL it requests. */
function openConsole(): Promise<ConsolePage> {
  return openPage(browser(), `${server.url}/`);
}

/** How many entries the page keeps in sessionStorage (the test's tsconfig has no DOM types). */
function storedKeys(page: Page): Promise<number> {
  return page.evaluate<number>('window.sessionStorage.length');
}

/** Operator calls made beside the console, as the CLI or a script would. */
async function operatorApi<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const response = await fetch(`${server.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

interface ApiUser {
  id: string;
  name: string;
  can_use_shell: boolean;
}

/** What `GET /api/users` says of `name`'s shell grant. */
async function grantedByApi(name: string): Promise<boolean | undefined> {
  const { users } = await operatorApi<{ users: ApiUser[] }>('/api/users');
  return users.find((user) => user.name === name)?.can_use_shell;
}

/** The users-table row whose name cell is exactly `name`. */
function userRow(page: Page, name: string) {
  return page.getByRole('row').filter({ has: page.getByRole('cell', { name, exact: true }) });
}

/** What the Shell column says for `name` (the words beside the button). */
async function shellColumn(page: Page, name: string): Promise<string> {
  return ((await userRow(page, name).locator('.shell-state').textContent()) ?? '').trim();
}

/** What the Status column says for `name`. */
async function statusColumn(page: Page, name: string): Promise<string> {
  return ((await userRow(page, name).locator('.user-status').textContent()) ?? '').trim();
}

/** `GET /api/me` with `key`: what the account's holder meets. */
async function meWith(key: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

describe('web console', () => {
  beforeAll(async () => {
    telegram = new FakeTelegram();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([telegram.start(), model.start()]);
    server = await startServerProcess(['--config', writeConfig(configYaml()).path]);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([telegram?.stop(), model?.stop()]);
  });

  it('serves the page, its script and its style with a strict CSP and no-cache', async () => {
    for (const [path, type] of [
      ['/', 'text/html'],
      ['/console.js', 'text/javascript'],
      ['/console.css', 'text/css'],
    ] as const) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain(type);
      expect(response.headers.get('cache-control')).toBe('no-cache');
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
    }
  });

  it('rejects a wrong key and keeps the sign-in form', async () => {
    const { page } = await openConsole();
    await signIn(page, 'not-a-real-key-at-all');
    await expect.poll(() => statusText(page)).toBe(REJECTED);
    expect(await page.getByLabel('API key').isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).toBe(false);
    expect(await storedKeys(page)).toBe(0);
  });

  it('operator creates a user; the user connects Telegram by code, sees it connected by itself, and disconnects', async () => {
    const { page, requests } = await openConsole();

    // Operator: create "ana" and read her key off the page.
    await signIn(page, ADMIN_TOKEN);
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await page.getByLabel('Name').fill('ana');
    await page.getByRole('button', { name: 'Create user' }).click();
    const newKey = page.locator('#new-key');
    await newKey.waitFor();
    expect(await newKey.textContent()).toContain('Copy it now: it is not shown again.');
    const apiKey = ((await page.locator('#new-key-value').textContent()) ?? '').trim();
    expect(apiKey.length).toBeGreaterThanOrEqual(16);
    await page.getByRole('cell', { name: 'ana', exact: true }).waitFor();
    await screenshot(page, 'users');

    // Sign out forgets the key; sign in as ana.
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(await storedKeys(page)).toBe(0);
    expect(await page.locator('#new-key-value').textContent()).toBe('');
    await signIn(page, apiKey);
    await page.getByRole('heading', { name: 'Chat connections' }).waitFor();
    await expect.poll(() => statusText(page)).toBe('Signed in as ana.');
    const telegramCard = page.getByRole('listitem').filter({ hasText: 'Telegram' }).first();
    await expect.poll(() => telegramCard.locator('.state').textContent()).toBe('Not connected');

    // Connect: a code and a t.me deep link carrying it.
    const connectedAt = requests.length;
    await page.getByRole('button', { name: 'Connect Telegram' }).click();
    const code = page.locator('#connect-code');
    await code.waitFor();
    const codeText = ((await code.textContent()) ?? '').trim();
    expect(codeText).not.toBe('');
    expect(await page.getByRole('link', { name: 'Open Telegram' }).getAttribute('href')).toBe(`https://t.me/${BOT_USERNAME}?start=${codeText}`);
    expect(await page.locator('#connect-instruction').textContent()).not.toBe('');

    // The person taps the link: Telegram sends /start <code> to the bot.
    const chatId = 8101;
    telegram.sendUserMessage({ chatId, chatType: 'private', text: `/start ${codeText}`, from: { id: chatId, first_name: 'Ana', username: 'ana_tg' } });
    const reply = await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.text === 'Telegram connected to DeerFlow.'), 10_000);
    expect(reply).toBeDefined();

    // The page notices by polling, without a reload.
    await expect.poll(() => page.locator('#connect-state').textContent(), { timeout: 10_000 }).toBe('Connected');
    await expect.poll(() => telegramCard.locator('.state').textContent()).toBe('Connected');
    expect(await code.isVisible()).toBe(false);
    await screenshot(page, 'connections');
    const polls = requests.slice(connectedAt).filter((r) => r.method === 'GET' && r.url.endsWith('/api/channels/connections'));
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(requests.filter((r) => r.method === 'GET' && new URL(r.url).pathname === '/')).toHaveLength(1);

    // Disconnect from the list of connected accounts.
    const disconnect = page.getByRole('button', { name: /^Disconnect Telegram account / });
    await disconnect.click();
    await expect.poll(() => telegramCard.locator('.state').textContent()).toMatch(/^Not connected/);
    await expect.poll(() => disconnect.count()).toBe(0);
    expect(await page.getByText('No connected accounts.').isVisible()).toBe(true);
    expect(await statusText(page)).toMatch(/^Disconnected Telegram account /);
  });

  it('operator disables and enables a user: the Status column and the user\'s key follow; the disabled user is told so at sign-in', async () => {
    const { api_key: key } = await operatorApi<{ api_key: string }>('/api/users', { method: 'POST', body: { name: 'dex' } });
    const { page } = await openConsole();
    await signIn(page, ADMIN_TOKEN);
    await page.getByRole('columnheader', { name: 'Status' }).waitFor();
    await expect.poll(() => statusColumn(page, 'dex')).toBe('Active');

    await page.getByRole('button', { name: 'Disable dex' }).click();
    await expect.poll(() => statusText(page)).toBe('Disabled dex: their key and chats are refused until enabled.');
    expect(await statusColumn(page, 'dex')).toBe('Disabled');
    expect(await meWith(key)).toEqual({ status: 403, body: { code: 'USER_DISABLED', message: 'This account is disabled. Ask the operator.' } });
    // Focus moves to the rebuilt row's twin button.
    expect(await page.evaluate<string | null>('document.activeElement?.getAttribute("aria-label") ?? null')).toBe('Enable dex');

    // dex, in another tab, reads why.
    const other = await openConsole();
    await signIn(other.page, key);
    await expect.poll(() => statusText(other.page)).toBe('This account is disabled. Ask the operator.');
    expect(await other.page.getByLabel('API key').isVisible()).toBe(true);

    await page.getByRole('button', { name: 'Enable dex' }).press('Enter');
    await expect.poll(() => statusText(page)).toBe('Enabled dex.');
    expect(await statusColumn(page, 'dex')).toBe('Active');
    expect((await meWith(key)).status).toBe(200);
    await page.reload();
    await expect.poll(() => statusColumn(page, 'dex')).toBe('Active');
  });

  it('operator rotates a key: the new key shows once with the same "Copy it now" text, the old key stops working', async () => {
    const { api_key: oldKey } = await operatorApi<{ api_key: string }>('/api/users', { method: 'POST', body: { name: 'eli' } });
    const { page } = await openConsole();
    await signIn(page, ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Rotate key for eli' }).click();
    await expect.poll(() => statusText(page)).toBe('New API key for eli; the old one no longer works. Copy the API key now: it is not shown again.');
    const newKey = page.locator('#new-key');
    expect(await newKey.textContent()).toContain('API key for eli. Copy it now: it is not shown again.');
    const shown = ((await page.locator('#new-key-value').textContent()) ?? '').trim();
    expect(shown).toMatch(/^dfc_/);
    expect(shown).not.toBe(oldKey);
    expect((await meWith(oldKey)).status).toBe(401);
    expect(await meWith(shown)).toMatchObject({ status: 200, body: { user: { name: 'eli' } } });
    // Shown once: a reload does not bring it back.
    await page.reload();
    await page.getByRole('columnheader', { name: 'Status' }).waitFor();
    expect(await newKey.isVisible()).toBe(false);
    expect(await page.content()).not.toContain(shown);
  });

  it('operator deletes a user with a second press on "Confirm delete <name>"; the row goes once the server answered', async () => {
    const { api_key: key } = await operatorApi<{ api_key: string }>('/api/users', { method: 'POST', body: { name: 'fin' } });
    await operatorApi('/api/users', { method: 'POST', body: { name: 'gwen' } });
    const { page } = await openConsole();
    await signIn(page, ADMIN_TOKEN);
    await userRow(page, 'fin').waitFor();

    // One press only asks; leaving the button takes it back.
    await page.getByRole('button', { name: 'Delete fin' }).click();
    await page.getByRole('button', { name: 'Confirm delete fin' }).waitFor();
    expect((await meWith(key)).status).toBe(200);
    await page.getByRole('button', { name: 'Delete gwen' }).focus();
    await page.getByRole('button', { name: 'Delete fin' }).waitFor();
    expect(await page.getByRole('button', { name: 'Confirm delete gwen' }).count()).toBe(0);

    // A failed delete keeps the row and says why.
    await page.route('**/api/users/*', (route) => (route.request().method() === 'DELETE' ? route.abort() : route.fallback()));
    await page.getByRole('button', { name: 'Delete fin' }).click();
    await page.getByRole('button', { name: 'Confirm delete fin' }).click();
    await expect.poll(() => statusText(page)).toBe('Could not reach the server. Try again.');
    expect(await userRow(page, 'fin').count()).toBe(1);
    await page.unroute('**/api/users/*');

    await page.getByRole('button', { name: 'Confirm delete fin' }).click();
    await expect.poll(() => statusText(page)).toBe('Deleted user fin.');
    expect(await userRow(page, 'fin').count()).toBe(0);
    expect(await userRow(page, 'gwen').count()).toBe(1);
    expect((await meWith(key)).status).toBe(401);
    const { users } = await operatorApi<{ users: ApiUser[] }>('/api/users');
    expect(users.map((user) => user.name)).not.toContain('fin');
    await page.reload();
    await userRow(page, 'gwen').waitFor();
    expect(await userRow(page, 'fin').count()).toBe(0);
  });

  it('operator grants and revokes the shell per user; the API agrees, and the column reads what the API says after a reload', async () => {
    // Users made through the API, as with the CLI: the console must show what exists, not only what it made.
    await operatorApi('/api/users', { method: 'POST', body: { name: 'bea' } });
    await operatorApi('/api/users', { method: 'POST', body: { name: 'cyd' } });
    const { page } = await openConsole();
    await signIn(page, ADMIN_TOKEN);
    await page.getByRole('columnheader', { name: 'Shell' }).waitFor();
    await expect.poll(() => shellColumn(page, 'bea')).toBe('Not granted');
    expect(await shellColumn(page, 'cyd')).toBe('Not granted');

    // Grant: the server holds it, the row shows it, and only bea changed.
    await page.getByRole('button', { name: 'Grant shell to bea' }).click();
    await expect.poll(() => statusText(page)).toBe('Granted the shell to bea.');
    expect(await grantedByApi('bea')).toBe(true);
    expect(await grantedByApi('cyd')).toBe(false);
    expect(await shellColumn(page, 'bea')).toBe('Granted');
    expect(await shellColumn(page, 'cyd')).toBe('Not granted');
    // The row is rebuilt from the answer; focus stays on its button, so a keyboard user is not lost.
    const revokeBea = page.getByRole('button', { name: 'Revoke shell from bea' });
    expect(await revokeBea.textContent()).toBe('Revoke shell');
    expect(await page.evaluate<string | null>('document.activeElement?.getAttribute("aria-label") ?? null')).toBe('Revoke shell from bea');

    // A grant made elsewhere (CLI, API) shows after a reload; the tab keeps its key.
    const cyd = (await operatorApi<{ users: ApiUser[] }>('/api/users')).users.find((user) => user.name === 'cyd');
    await operatorApi(`/api/users/${cyd?.id}`, { method: 'PATCH', body: { can_use_shell: true } });
    await page.reload();
    await page.getByRole('columnheader', { name: 'Shell' }).waitFor();
    await expect.poll(() => shellColumn(page, 'cyd')).toBe('Granted');
    expect(await shellColumn(page, 'bea')).toBe('Granted');

    // A failed request is said in the status line and changes nothing on the page.
    await page.route('**/api/users/*', (route) => (route.request().method() === 'PATCH' ? route.abort() : route.fallback()));
    await page.getByRole('button', { name: 'Revoke shell from bea' }).click();
    await expect.poll(() => statusText(page)).toBe('Could not reach the server. Try again.');
    expect(await shellColumn(page, 'bea')).toBe('Granted');
    expect(await page.getByRole('button', { name: 'Revoke shell from bea' }).isEnabled()).toBe(true);
    expect(await grantedByApi('bea')).toBe(true);
    await page.unroute('**/api/users/*');

    // Revoke with the keyboard: back to no shell, on the server and on the page, also after a reload.
    await page.getByRole('button', { name: 'Revoke shell from bea' }).press('Enter');
    await expect.poll(() => statusText(page)).toBe('Revoked the shell from bea.');
    expect(await grantedByApi('bea')).toBe(false);
    expect(await shellColumn(page, 'bea')).toBe('Not granted');
    await page.reload();
    await page.getByRole('columnheader', { name: 'Shell' }).waitFor();
    await expect.poll(() => shellColumn(page, 'bea')).toBe('Not granted');
    expect(await shellColumn(page, 'cyd')).toBe('Granted');
    expect(await page.getByRole('button', { name: 'Grant shell to bea' }).isVisible()).toBe(true);
  });
});
