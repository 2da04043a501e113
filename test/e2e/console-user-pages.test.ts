import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { apiClient, type Json } from './api-client.js';
import { openSignedIn, screenshot, statusText, useConsoleBrowser } from './console-browser.js';
import { chatTurn, createUser, memoryResponder, startConsoleServer } from './console-fixtures.js';
import type { ServerProcess } from './server-process.js';
import { webChat } from './web-chat-client.js';

/**
 * The console's memory, goals, schedules and skills pages in a real headless Chromium against the
 * real server. What the pages show is made the way people make it: memory facts and schedules by
 * chatting in the web chat (the fake model answers the memory extraction), a goal through the
 * API. Every assertion is about what the page shows, checked against what the API then says;
 * elements are found by role and label. `UPDATE_SCREENSHOTS=1` writes docs/images/console-<page>.png.
 */

const ADMIN_TOKEN = 'console-user-pages-operator-token-01';

let model: FakeOpenAI;
let server: ServerProcess | undefined;
const url = () => server?.url ?? '';
const browser = useConsoleBrowser(url);
const api = apiClient(url);

interface Person {
  id: string;
  key: string;
}

function createPerson(name: string): Promise<Person> {
  return createUser(api, ADMIN_TOKEN, name);
}

/** Says `text` in a new web chat conversation and resolves with the agent's final answer. */
async function chatSays(person: Person, text: string): Promise<string> {
  return (await chatTurn(webChat(url, person.key), text)).answer;
}

async function factsOf(person: Person): Promise<string[]> {
  return (((await api('GET', '/api/memory', person.key)).body?.facts ?? []) as Json[]).map((fact) => fact.content as string);
}

/** Chats until the memory extraction stored `facts` (it runs after the turn, with nothing to wait for in the chat). */
async function learn(person: Person, facts: string[]): Promise<void> {
  await chatSays(person, facts.map((fact) => `remember ${fact}`).join('; '));
  await vi.waitFor(
    async () => {
      expect((await factsOf(person)).sort()).toEqual([...facts].sort());
    },
    { timeout: 30_000, interval: 50 },
  );
}

/** A fresh profile, signed in with `key`, on `/console/<name>`. */
function openPage(key: string, name: string): Promise<Page> {
  return openSignedIn(browser(), url(), key, `/console/${name}`, { viewport: { width: 1100, height: 640 } });
}

beforeAll(async () => {
  model = new FakeOpenAI({ apiKey: 'sk-user-pages' });
  model.respond = memoryResponder;
  await model.start();
  server = await startConsoleServer(ADMIN_TOKEN, model, 'sk-user-pages', `memory: { debounce_seconds: 0 }
`);
});

afterAll(async () => {
  await server?.stop();
  await model?.stop();
});


describe('console pages for a person and the operator', () => {
  it("shows a person their memory facts, never another's; deletes one, and it stays gone after a reload; forgets everything on the second press", async () => {
    const ana = await createPerson('ana');
    const ben = await createPerson('ben');
    await learn(ana, ['ana deploys on Fridays', 'ana likes tabs over spaces in every file']);
    await learn(ben, ['ben drinks green tea']);

    const page = await openPage(ana.key, 'memory');
    await page.getByRole('heading', { name: 'Memory' }).waitFor();
    await page.getByRole('cell', { name: 'ana deploys on Fridays', exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: 'ana likes tabs over spaces in every file', exact: true }).isVisible()).toBe(true);
    expect(await page.getByRole('cell', { name: 'preference' }).count()).toBe(2);
    expect(await page.getByText('ben drinks green tea').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Memory' }).getAttribute('aria-current')).toBe('page');
    await screenshot(page, 'memory');

    await page.getByRole('button', { name: 'Delete fact: ana likes tabs over spaces…' }).click();
    await expect.poll(() => statusText(page)).toBe('Deleted the fact.');
    await expect.poll(() => page.getByRole('cell', { name: 'ana likes tabs over spaces in every file' }).count()).toBe(0);
    expect(await factsOf(ana)).toEqual(['ana deploys on Fridays']);
    await page.reload();
    await page.getByRole('cell', { name: 'ana deploys on Fridays', exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: 'ana likes tabs over spaces in every file' }).count()).toBe(0);

    // One press only asks; nothing is forgotten until the second.
    await page.getByRole('button', { name: 'Forget everything' }).click();
    const confirm = page.getByRole('button', { name: 'Press again to forget everything' });
    await confirm.waitFor();
    expect(await factsOf(ana)).toEqual(['ana deploys on Fridays']);
    await confirm.click();
    await expect.poll(() => statusText(page)).toBe('Forgot everything (1 fact).');
    await page.getByText('Nothing is remembered about you yet.', { exact: false }).waitFor();
    expect(await factsOf(ana)).toEqual([]);
    expect(await factsOf(ben)).toEqual(['ben drinks green tea']);
  });

  it('shows a goal with its conversation and status, and clears it', async () => {
    const cy = await createPerson('cy');
    const thread = (await api('POST', '/api/threads', cy.key, {})).body?.thread_id as string;
    expect((await api('PUT', `/api/threads/${thread}/goal`, cy.key, { objective: 'tidy the backlog before the release' })).status).toBe(200);

    const page = await openPage(cy.key, 'goals');
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'tidy the backlog before the release', exact: true }) });
    await row.waitFor();
    expect(await row.getByRole('cell', { name: `API thread ${thread.slice(0, 8)}` }).isVisible()).toBe(true);
    expect(await row.getByRole('cell', { name: 'Not judged yet' }).isVisible()).toBe(true);
    await screenshot(page, 'goals');

    await page.getByRole('button', { name: 'Clear goal: tidy the backlog before the…' }).click();
    await expect.poll(() => statusText(page)).toBe('Cleared the goal.');
    await page.getByText('No thread has a goal.', { exact: false }).waitFor();
    expect((await api('GET', `/api/threads/${thread}/goal`, cy.key)).body?.goal).toBeNull();
  });

  it('pauses, resumes and, on the second press, deletes a schedule made in the chat', async () => {
    const dee = await createPerson('dee');
    const confirmation = await chatSays(dee, '/schedule every 2h water the plants');
    const id = /^Scheduled ([a-z0-9]{6}):/.exec(confirmation)?.[1] as string;
    expect(id).toBeDefined();
    const stateOnServer = async () => (await api('GET', `/api/schedules/${id}`, dee.key)).body?.schedule.state as string;

    const page = await openPage(dee.key, 'schedules');
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'water the plants', exact: true }) });
    await row.waitFor();
    expect(await row.getByRole('cell', { name: /^every 2 hours; next / }).isVisible()).toBe(true);
    expect(await row.getByRole('cell', { name: /^web · / }).isVisible()).toBe(true);
    expect(await row.locator('.schedule-state').textContent()).toBe('Active');
    await screenshot(page, 'schedules');

    await page.getByRole('button', { name: `Pause schedule ${id}` }).click();
    await expect.poll(() => statusText(page)).toBe(`Paused schedule ${id}.`);
    expect(await row.locator('.schedule-state').textContent()).toBe('Paused');
    expect(await stateOnServer()).toBe('paused');

    await page.getByRole('button', { name: `Resume schedule ${id}` }).click();
    await expect.poll(() => statusText(page)).toBe(`Resumed schedule ${id}.`);
    expect(await row.locator('.schedule-state').textContent()).toBe('Active');
    expect(await stateOnServer()).toBe('active');

    const remove = page.getByRole('button', { name: `Delete schedule ${id}` });
    await remove.click();
    await expect.poll(() => remove.textContent()).toBe('Press again to delete');
    expect(await stateOnServer()).toBe('active');
    await remove.click();
    await expect.poll(() => statusText(page)).toBe(`Deleted schedule ${id}.`);
    expect(await stateOnServer()).toBe('cancelled');
    expect(await page.getByRole('button', { name: `Pause schedule ${id}` }).count()).toBe(0);
  });

  it('lets the operator switch a skill off and on; the API agrees, also after a reload', async () => {
    const { body } = await api('GET', '/api/skills', ADMIN_TOKEN);
    const skill = ((body?.skills ?? []) as Json[]).find((s) => s.enabled) as Json;
    expect(skill).toBeDefined();
    const enabledOnServer = async () =>
      (((await api('GET', '/api/skills', ADMIN_TOKEN)).body?.skills ?? []) as Json[]).find((s) => s.name === skill.name)?.enabled;

    const page = await openPage(ADMIN_TOKEN, 'skills');
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: skill.name, exact: true }) });
    await row.waitFor();
    expect(await row.getByRole('cell', { name: skill.source === 'public' ? 'Shipped (public)' : 'Installed (custom)' }).isVisible()).toBe(true);
    expect(await row.locator('.state').textContent()).toBe('On');
    await screenshot(page, 'skills');

    await page.getByRole('button', { name: `Turn off skill ${skill.name}` }).click();
    await expect.poll(() => statusText(page)).toBe(`Turned ${skill.name} off.`);
    expect(await row.locator('.state').textContent()).toBe('Off');
    expect(await enabledOnServer()).toBe(false);
    await page.reload();
    await row.waitFor();
    expect(await row.locator('.state').textContent()).toBe('Off');

    await page.getByRole('button', { name: `Turn on skill ${skill.name}` }).press('Enter');
    await expect.poll(() => statusText(page)).toBe(`Turned ${skill.name} on.`);
    expect(await row.locator('.state').textContent()).toBe('On');
    expect(await enabledOnServer()).toBe(true);
  });

  it('refuses a person the skills page, and keeps its link out of their navigation', async () => {
    const eve = await createPerson('eve');
    const page = await openPage(eve.key, 'skills');
    await expect.poll(() => statusText(page)).toBe('This page is for the operator. Sign in with the operator token to see it.');
    expect(await page.getByRole('table').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Skills' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Memory' }).isVisible()).toBe(true);
  });

  it("lets the operator pick a user and see and delete that user's facts, and only theirs", async () => {
    const fen = await createPerson('fen');
    const gus = await createPerson('gus');
    await learn(fen, ['fen reviews on Mondays', 'fen writes in Rust']);
    await learn(gus, ['gus runs the pager']);

    const page = await openPage(ADMIN_TOKEN, 'memory');
    await page.getByLabel('User').waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    await page.getByLabel('User').selectOption({ label: 'fen' });
    await page.getByRole('cell', { name: 'fen writes in Rust', exact: true }).waitFor();
    expect(await page.getByRole('table', { name: 'What the agent remembers about fen' }).isVisible()).toBe(true);
    expect(await page.getByText('gus runs the pager').count()).toBe(0);

    await page.getByRole('button', { name: 'Delete fact: fen writes in Rust' }).click();
    await expect.poll(() => statusText(page)).toBe('Deleted the fact.');
    await expect.poll(() => page.getByRole('cell', { name: 'fen writes in Rust' }).count()).toBe(0);
    expect(await factsOf(fen)).toEqual(['fen reviews on Mondays']);
    expect(await factsOf(gus)).toEqual(['gus runs the pager']);

    await page.getByLabel('User').selectOption({ label: 'gus' });
    await page.getByRole('cell', { name: 'gus runs the pager', exact: true }).waitFor();
    expect(await page.getByText('fen reviews on Mondays').count()).toBe(0);
  });
});
