import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoResponder, FakeOpenAI } from '../fakes/openai/index.js';
import { apiClient } from './api-client.js';
import { type ConsolePage, openPage, screenshot, signIn, useConsoleBrowser } from './console-browser.js';
import { createUser } from './console-fixtures.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';
import { agentFinals, webChat } from './web-chat-client.js';

/**
 * The operator's charts and agents pages in a real headless Chromium against the real server:
 * messages a person sent through the web chat appear in the charts' numbers (sampled every
 * second here) and as SVG lines; the agents page lists an agent with its GitHub binding. A
 * person's key sees neither. `UPDATE_SCREENSHOTS=1` writes docs/images/console-<page>.png.
 */

const ADMIN_TOKEN = 'charts-operator-token-0123456789';

let model: FakeOpenAI;
let server: ServerProcess;
const browser = useConsoleBrowser(() => server?.url ?? '');
let personKey: string;

function openConsole(): Promise<ConsolePage> {
  return openPage(browser(), `${server.url}/`, { viewport: { width: 1100, height: 900 } });
}

/** The numbers table's column `header`, one number per row. */
async function column(page: Page, header: string): Promise<number[]> {
  const numbers = page.getByRole('table', { name: 'Samples, newest first' });
  const headers = (await numbers.getByRole('columnheader').allTextContents()).map((text) => text.trim());
  const index = headers.indexOf(header);
  const cells = await numbers.locator(`tbody tr td:nth-child(${index + 1})`).allTextContents();
  return cells.map((text) => Number(text.trim())).filter((value) => !Number.isNaN(value));
}

const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0);

beforeAll(async () => {
  model = new FakeOpenAI({ apiKey: 'sk-charts' });
  await model.start();
  const { dir } = writeConfig('');
  const agents = join(dir, 'agents');
  mkdirSync(join(agents, 'triage'), { recursive: true });
  writeFileSync(join(agents, 'triage', 'SOUL.md'), 'You triage new issues.\n');
  writeFileSync(
    join(agents, 'triage', 'config.yaml'),
    `description: Labels new issues and asks for missing details.
github:
  bot_login: triage-app
  bindings:
    - repo: octo-org/hello-world
      triggers:
        issues: {actions: [opened, reopened]}
        issue_comment: {require_mention: true}
`,
  );
  server = await startServerProcess([
    '--config',
    writeConfig(`server: { port: 0 }
data_dir: "${join(dir, 'data')}"
auth: { admin_token: ${ADMIN_TOKEN} }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-charts, max_retries: 0 }
memory: { enabled: false }
agents: { dir: "${agents}" }
metrics: { history_interval_seconds: 1 }
`).path,
  ]);
  personKey = (await createUser(apiClient(() => server.url), ADMIN_TOKEN, 'dana')).key;
});

afterAll(async () => {
  await server?.stop();
  await model?.stop();
});


describe('console charts and agents', () => {
  it('charts the messages a person sent: three SVG charts, and the numbers in the table', async () => {
    model.respond = echoResponder;
    const dana = webChat(() => server.url, personKey);
    const conversation = await dana.newConversation();
    const events = await dana.events(conversation);
    for (const [index, text] of ['one', 'two', 'three'].entries()) {
      await dana.send(conversation, text);
      await events.waitFor((frames) => agentFinals(frames)[index]);
    }
    model.enqueue({ fail: { status: 400, message: 'bad request' } });
    await dana.send(conversation, 'four');
    await events.waitFor((frames) => agentFinals(frames)[3]);
    events.close();

    const { page } = await openConsole();
    await signIn(page, ADMIN_TOKEN);
    await page.getByRole('link', { name: 'Charts' }).click();
    await page.getByRole('heading', { name: 'Charts' }).waitFor();
    for (const name of ['Messages per interval', 'Reply time', 'Errors per interval']) {
      await page.getByRole('img', { name, exact: true }).waitFor();
    }
    expect(await page.locator('figure.chart svg').count()).toBe(3);
    // The numbers: every message counted once, in the interval it was answered in (the page refreshes by itself).
    await page.getByText('The numbers').click();
    await expect.poll(async () => [total(await column(page, 'Answered')), total(await column(page, 'Failed'))], { timeout: 30_000 }).toEqual([3, 1]);
    expect(total(await column(page, 'Errors'))).toBe(0);
    const p50 = await column(page, 'Reply time p50 (s)');
    expect(p50.length).toBeGreaterThan(0);
    expect(p50.every((seconds) => seconds > 0)).toBe(true);
    await expect.poll(() => page.locator('.summary').textContent()).toMatch(/3 answered, 1 failed, 0 errors/);
    // The messages chart draws a line (or a dot) for both series, with time labels on its axis.
    const messages = page.getByRole('img', { name: 'Messages per interval', exact: true });
    expect(await messages.locator('.series-0 polyline').count()).toBeGreaterThan(0);
    expect(await messages.locator('.series-1 polyline').count()).toBeGreaterThan(0);
    expect((await messages.locator('text.axis-label').allTextContents()).some((label) => /\d{1,2}:\d{2}/.test(label))).toBe(true);
    // The details stay open across the page's own refreshes.
    await expect.poll(() => page.locator('details.numbers').getAttribute('open')).not.toBeNull();
    await screenshot(page, 'charts');

    // A shorter range asks the server again and still shows the numbers.
    await page.getByLabel('Show').selectOption({ label: 'Last hour' });
    await expect.poll(() => page.locator('.summary').textContent()).toMatch(/^In the last hour: 3 answered, 1 failed/);
  });

  it('lists the agents with their GitHub bindings', async () => {
    const { page } = await openConsole();
    await signIn(page, ADMIN_TOKEN);
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('table', { name: 'Agents' }).waitFor();
    const triage = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'triage', exact: true }) });
    await triage.waitFor();
    const cells = (await triage.getByRole('cell').allTextContents()).map((text) => text.trim());
    expect(cells).toEqual([
      'triage',
      'Labels new issues and asks for missing details.',
      'The run’s model',
      'All',
      'octo-org/hello-world: issue_comment, issues',
      'Enabled',
    ]);
    const lead = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'lead', exact: true }) });
    expect(await lead.getByRole('cell').nth(4).textContent()).toBe('None');
    await screenshot(page, 'agents');
  });

  it("shows a person neither page nor its data, and no link to them", async () => {
    const { page } = await openConsole();
    await signIn(page, personKey);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.getByRole('link', { name: 'Charts' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Agents' }).count()).toBe(0);
    for (const path of ['/console/charts', '/console/agents']) {
      await page.goto(`${server.url}${path}`);
      await expect.poll(() => page.getByRole('status').textContent()).toBe('This page is for the operator. Sign in with the operator token to see it.');
      expect(await page.locator('svg').count()).toBe(0);
      expect(await page.getByRole('table').count()).toBe(0);
    }
  });
});
