import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { apiClient, type Json } from './api-client.js';
import { openSignedIn, rowsOf, screenshot, statusText, useConsoleBrowser } from './console-browser.js';
import { chatTurn, createUser as createAccount, holdOrFailResponder, startConsoleServer } from './console-fixtures.js';
import { channelStarted, type ServerProcess } from './server-process.js';
import { webChat } from './web-chat-client.js';

/**
 * The console's operator pages in a real headless Chromium against the real server (issue #18):
 * conversations with their transcripts (the operator's all, a person's own), runs with Cancel, the
 * outbox with Retry, and the connection audit. Every assertion is about what the page shows or
 * what the server then holds; elements are found by role and label. With `UPDATE_SCREENSHOTS=1`
 * each page is photographed into docs/images/.
 */

const ADMIN_TOKEN = 'console-pages-operator-token-0123456789';
const BOT_USERNAME = 'pages_bot';

let model: FakeOpenAI;
let telegram: FakeTelegram;
let server: ServerProcess | undefined;
const url = () => server?.url ?? '';
const browser = useConsoleBrowser(url);
const api = apiClient(url);
let aliceKey: string;
let bobKey: string;
/** Model answers the test holds until it lets them go. */
const held: Array<() => void> = [];

async function createUser(name: string): Promise<string> {
  return (await createAccount(api, ADMIN_TOKEN, name)).key;
}

/** Writes `text` in a new web conversation of `key`'s and waits for the agent's final. */
async function webChatTurn(key: string, title: string, text: string): Promise<string> {
  return (await chatTurn(webChat(url, key), text, title)).conversation;
}

/** A fresh browser profile signed in with `key`, then at `path`. */
function openPage(key: string, path: string): Promise<Page> {
  return openSignedIn(browser(), url(), key, path, { viewport: { width: 1100, height: 800 } });
}

describe('console pages', () => {
  beforeAll(async () => {
    model = new FakeOpenAI({ apiKey: 'sk-pages' });
    telegram = new FakeTelegram();
    model.respond = holdOrFailResponder(held);
    await Promise.all([model.start(), telegram.start()]);
    server = await startConsoleServer(ADMIN_TOKEN, model, 'sk-pages', `memory: { enabled: false }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
channel_connections:
  enabled: true
  require_bound_identity: false
  telegram: { enabled: true, bot_username: ${BOT_USERNAME} }
`);
    await server.waitForLog(channelStarted('telegram'));
    aliceKey = await createUser('alice');
    bobKey = await createUser('bob');

    // Alice binds her Telegram account; a stranger tries a wrong code (both in the audit trail).
    const offer = await api('POST', '/api/channels/telegram/connect', aliceKey);
    telegram.sendUserMessage({ chatId: 8201, chatType: 'private', text: `/start ${offer.body?.code}`, from: { id: 8201, first_name: 'Alice' } });
    await telegram.waitFor(() => telegram.botMessages(8201).some((m) => m.text === 'Telegram connected to DeerFlow.'), 30_000);
    telegram.sendUserMessage({ chatId: 8202, chatType: 'private', text: '/start not-a-code', from: { id: 8202, first_name: 'Mal' } });
    // The bot says the code was not accepted: by then the refusal is in the trail.
    await telegram.waitFor(() => telegram.botMessages(8202).length > 0, 30_000);

    // Conversations: an unbound Telegram chat, alice's bound one, alice's and bob's web chats.
    telegram.sendUserMessage({ chatId: 8301, chatType: 'private', text: 'stranger hello', from: { id: 8301, first_name: 'Sam' } });
    await telegram.waitFor(() => telegram.botMessages(8301).some((m) => m.text === 'Echo: stranger hello'), 60_000);
    telegram.sendUserMessage({ chatId: 8201, chatType: 'private', text: 'alice on telegram', from: { id: 8201, first_name: 'Alice' } });
    await telegram.waitFor(() => telegram.botMessages(8201).some((m) => m.text === 'Echo: alice on telegram'), 60_000);
    await webChatTurn(bobKey, 'Bob asks', 'bob question');
    await webChatTurn(aliceKey, 'Alice asks', 'alice question');
  });

  afterAll(async () => {
    for (const release of held.splice(0)) release();
    await server?.stop();
    await Promise.all([model?.stop(), telegram?.stop()]);
  });


  it('shows the operator every conversation, newest first, opens a transcript, and pages back with Older', async () => {
    const page = await openPage(ADMIN_TOKEN, '/console/conversations');
    const caption = 'Conversations, newest activity first';
    await page.getByRole('table', { name: caption }).waitFor();
    const rows = await rowsOf(page, caption);
    expect(rows.map((cells) => cells.slice(0, 3))).toEqual([
      ['web', 'Alice asks', 'alice'],
      ['web', 'Bob asks', 'bob'],
      ['telegram', '8201', 'alice'],
      ['telegram', '8301', '8301'],
    ]);
    await screenshot(page, 'conversations');

    const aliceThread = rows[0]?.[3] as string;
    await page.getByRole('button', { name: `Open conversation ${aliceThread}` }).click();
    const transcript = page.getByRole('region', { name: 'Transcript' });
    await transcript.getByRole('table').waitFor();
    expect(await rowsOf(page, 'Messages, oldest first')).toEqual([
      ['Person', 'alice question'],
      ['Agent', 'Echo: alice question'],
    ]);
    await expect.poll(() => statusText(page)).toBe(`Showing the transcript of thread ${aliceThread}.`);
    await screenshot(page, 'conversations-transcript');

    // Two a page: Older walks back through the rest, Newest returns.
    await page.goto(`${url()}/console/conversations?per_page=2`);
    await page.getByRole('table', { name: caption }).waitFor();
    expect((await rowsOf(page, caption)).map((cells) => cells[1])).toEqual(['Alice asks', 'Bob asks']);
    await page.getByRole('button', { name: 'Older' }).click();
    await expect.poll(async () => (await rowsOf(page, caption)).map((cells) => cells[1])).toEqual(['8201', '8301']);
    await page.getByRole('button', { name: 'Newest' }).click();
    await expect.poll(async () => (await rowsOf(page, caption)).map((cells) => cells[1])).toEqual(['Alice asks', 'Bob asks']);
  });

  it("shows a person only their own conversations, and never bob's", async () => {
    const page = await openPage(aliceKey, '/console/conversations');
    const caption = 'Conversations, newest activity first';
    await page.getByRole('table', { name: caption }).waitFor();
    const rows = await rowsOf(page, caption);
    expect(rows.map((cells) => cells.slice(0, 3))).toEqual([
      ['web', 'Alice asks', 'alice'],
      ['telegram', '8201', 'alice'],
    ]);
    expect(await page.getByText('Bob asks').count()).toBe(0);
    await page.getByRole('button', { name: `Open conversation ${rows[1]?.[3]}` }).click();
    await page.getByRole('region', { name: 'Transcript' }).getByRole('table').waitFor();
    expect(await rowsOf(page, 'Messages, oldest first')).toEqual([
      ['Person', 'alice on telegram'],
      ['Agent', 'Echo: alice on telegram'],
    ]);
    // The operator's pages are not for her.
    await page.goto(`${url()}/console/runs`);
    await expect.poll(() => statusText(page)).toBe('This page is for the operator. Sign in with the operator token to see it.');
    expect(await page.getByRole('link', { name: 'Runs' }).count()).toBe(0);
  });

  it('shows running and failed runs, refreshes by itself, and cancels a run', async () => {
    const page = await openPage(ADMIN_TOKEN, '/console/runs');
    await page.getByText('No run is in progress.').waitFor();

    // A failed run and a held one start after the page opened: the refresh brings them in.
    const failing = webChat(url, aliceKey);
    await failing.send(await failing.newConversation('failing'), 'fail me now');
    const holding = webChat(url, aliceKey);
    const heldConversation = await holding.newConversation('held');
    await holding.send(heldConversation, 'hold me please');
    await expect.poll(() => held.length, { timeout: 60_000 }).toBe(1);
    await page.getByRole('table', { name: 'Running' }).waitFor({ timeout: 15_000 });
    await page.getByRole('table', { name: 'Failed' }).waitFor({ timeout: 15_000 });
    const [running] = ((await api('GET', '/api/runs?status=running', ADMIN_TOKEN)).body?.runs ?? []) as Json[];
    const runId = running?.run_id as string;
    expect(await rowsOf(page, 'Running')).toEqual([[runId, `web ${heldConversation}`, 'Running', expect.any(String), 'Cancel']]);
    const failed = await rowsOf(page, 'Failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.[2]).toBe('Failed');
    expect(failed[0]?.[4]).toMatch(/^(model call failed|agent run failed)$/);
    await screenshot(page, 'runs');

    await page.getByRole('button', { name: `Cancel run ${runId}` }).click();
    await expect.poll(() => statusText(page)).toBe(`Run ${runId} is cancelled.`);
    expect((await rowsOf(page, 'Running'))[0]?.[2]).toBe('Cancelled');
    expect((await api('GET', `/api/threads/${running?.thread_id}/runs/${runId}`, ADMIN_TOKEN)).body?.status).toBe('interrupted');
    // The next refresh drops it from the running list.
    await page.getByText('No run is in progress.').waitFor({ timeout: 15_000 });
    for (const release of held.splice(0)) release();
  });

  it('shows a dead letter and sends it again with Retry', async () => {
    const chatId = 8401;
    const blocked = { errorCode: 403, description: 'Forbidden: bot was blocked by the user' } as const;
    telegram.failNext('sendMessage', blocked, 1000);
    telegram.failNext('editMessageText', blocked, 1000);
    telegram.sendUserMessage({ chatId, chatType: 'private', text: 'while blocked', from: { id: chatId, first_name: 'Dee' } });
    await server?.waitForLog((entry) => entry.msg === 'reply refused by the platform; kept as a dead letter', 30_000);

    const page = await openPage(ADMIN_TOKEN, '/console/outbox');
    await page.getByRole('table', { name: 'Dead letters' }).waitFor();
    const [letter] = await rowsOf(page, 'Dead letters');
    expect(letter?.slice(0, 4)).toEqual(['telegram', String(chatId), '1', 'CHANNEL_REJECTED']);
    expect(await page.getByText('No reply is waiting for another attempt.').isVisible()).toBe(true);
    // The operator sees where and why, never what was said.
    expect(await page.locator('main').textContent()).not.toContain('while blocked');
    await screenshot(page, 'outbox');

    telegram.clearFaults();
    await page.getByRole('button', { name: new RegExp(`^Retry dead letter \\d+ to telegram ${chatId}$`) }).click();
    await expect.poll(() => statusText(page)).toBe('1 dead letter sent again.');
    await page.getByText('No dead letters.').waitFor();
    expect(await page.getByRole('button', { name: 'Retry all dead letters' }).count()).toBe(0);
    await telegram.waitFor(() => telegram.botMessages(chatId).some((m) => m.text === 'Echo: while blocked'), 60_000);
  });

  it('shows the connection audit trail, newest first, with user names', async () => {
    const page = await openPage(ADMIN_TOKEN, '/console/audit?per_page=1');
    const caption = 'Connection events, newest first';
    await page.getByRole('table', { name: caption }).waitFor();
    expect((await rowsOf(page, caption)).map((cells) => cells.slice(1))).toEqual([['', 'telegram', 'Code rejected', '8202', '8202']]);
    await page.getByRole('button', { name: 'Older' }).click();
    await expect.poll(async () => (await rowsOf(page, caption)).map((cells) => cells.slice(1))).toEqual([['alice', 'telegram', 'Bound', '8201', '8201']]);
    await page.goto(`${url()}/console/audit`);
    await page.getByRole('table', { name: caption }).waitFor();
    expect((await rowsOf(page, caption)).map((cells) => cells[3])).toEqual(['Code rejected', 'Bound']);
    await screenshot(page, 'audit');
  });
});
