import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI, type FakeReply, lastUserText } from '../fakes/openai/index.js';
import { loadScaledMs } from '../helpers/load-scaled-timer.js';
import { openPage, useConsoleBrowser } from './console-browser.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The chat page in a real headless Chromium against the real server, on a server without keys
 * (the embedded default, on loopback): a person types, sees the acknowledgement, the answer
 * growing and its final, attaches a file and gets one back. With `DFC_SCREENSHOTS=1` it also
 * writes the page as `docs/images/web-chat.png` for docs/console.md.
 */

/** How long the page may take to show what the server sent: a bound against hanging, stretched on a busy machine. */
const SHOWN = { timeout: loadScaledMs(30_000) };
const SCREENSHOTS = process.env.DFC_SCREENSHOTS === '1' ? join(import.meta.dirname, '../../docs/images') : undefined;

let model: FakeOpenAI;
let server: ServerProcess | undefined;
// Pages are closed and checked after each test, so none is left for the next file of this worker.
const browser = useConsoleBrowser(() => server?.url ?? '');

/** An answer with each construct the page renders, and HTML and a script link that it must not. */
const MARKDOWN_ANSWER = 'This is **bold**, <b>raw</b> &amp; [docs](https://example.com/a?b=1&c=2) with `a && b`, and [javascript:alert(1)](javascript:alert(1)).\n\n- one\n- two\n\n```sh\necho "<done>"\n```';

/** The texts of the agent's messages on the page, in order. */
async function agentTexts(page: Page): Promise<string[]> {
  return page.locator('.message.agent .text').allTextContents();
}

describe('the chat page in a browser', () => {
  beforeAll(async () => {
    model = new FakeOpenAI({ apiKey: 'sk-page' });
    await model.start();
    server = await startServerProcess([
      '--config',
      writeConfig(`server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-page, max_retries: 0 }
memory: { enabled: false }
`).path,
    ]);
  });

  afterAll(async () => {
    await server?.stop();
    await model?.stop();
  });

  it('streams the answer into the page, then shows the final; files go both ways; nothing from elsewhere, no CSP errors', async () => {
    const { page, context, requests, pageErrors: errors } = await openPage(browser(), `${server?.url}/chat`, { viewport: { width: 1100, height: 700 } });
    const foreign = () => requests.map(({ url }) => url).filter((url) => !url.startsWith(server?.url ?? '') && !url.startsWith('blob:'));
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    model.respond = async (request): Promise<FakeReply> => {
      const asked = lastUserText(request.messages);
      // Before the tool check: the history holds the summary's tool calls from then on.
      if (asked.includes('format it')) return { text: MARKDOWN_ANSWER };
      if (request.messages.some((m) => m.role === 'tool')) return { text: 'Here is the summary.' };
      if (asked.includes('summarise')) {
        return {
          toolCalls: [
            { name: 'write_file', args: { description: 'summary', path: '/mnt/user-data/outputs/summary.md', content: '# Summary\n' } },
            { name: 'present_files', args: { filepaths: ['/mnt/user-data/outputs/summary.md'] } },
          ],
        };
      }
      // The first half shows as a partial before the rest is written.
      await held;
      return { chunks: ['Streaming ', 'into ', 'the ', 'page, ', 'word ', 'by ', 'word.'], chunkDelayMs: 150 };
    };
    await page.getByLabel('Message').fill('Hello <b>agent</b> & friends');
    await page.getByLabel('Message').press('Enter');

    // The person's message as typed (no HTML made of it), then the acknowledgement.
    await page.locator('.message.person').first().waitFor(SHOWN);
    expect(await page.locator('.message.person .text').first().textContent()).toBe('Hello <b>agent</b> & friends');
    expect(await page.locator('.message.person b').count()).toBe(0);
    await expect.poll(() => agentTexts(page), SHOWN).toEqual(['Working on it...']);
    release();
    // A partial: a beginning of the answer, shown while the model still writes.
    await expect
      .poll(async () => {
        const [text = ''] = await agentTexts(page);
        return text.startsWith('Streaming') && !text.includes('word.') ? 'partial' : text;
      }, SHOWN)
      .toBe('partial');
    await expect.poll(() => agentTexts(page), SHOWN).toEqual(['Streaming into the page, word by word.']);
    // The conversation is listed, titled by its first words.
    await page.getByRole('button', { name: 'Hello <b>agent</b> & friends' }).waitFor(SHOWN);

    await page.locator('#files').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('alpha\nbeta\n') });
    await page.getByLabel('Message').fill('summarise the file');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('button', { name: /summary\.md/ }).waitFor(SHOWN);
    expect(await page.getByRole('button', { name: /notes\.txt/ }).count()).toBe(1);
    await expect.poll(async () => (await agentTexts(page)).some((text) => text.startsWith('Here is the summary.')), SHOWN).toBe(true);
    const upload = JSON.stringify(model.requests.find((r) => JSON.stringify(r.messages).includes('summarise the file'))?.messages);
    expect(upload).toContain('notes.txt');

    // The agent's Markdown is rendered; the HTML in it shows as written, and only a web link is a link.
    await page.getByLabel('Message').fill('format it');
    await page.getByLabel('Message').press('Enter');
    const answer = page.locator('.message.agent').filter({ hasText: 'a && b' });
    await answer.waitFor(SHOWN);
    expect(await answer.locator('strong').allTextContents()).toEqual(['bold']);
    expect(await answer.locator('code').allTextContents()).toEqual(['a && b', 'echo "<done>"']);
    expect(await answer.locator('li').allTextContents()).toEqual(['one', 'two']);
    expect(await answer.locator('a').evaluateAll((links) => links.map((a) => [a.textContent, a.getAttribute('href')]))).toEqual([['docs', 'https://example.com/a?b=1&c=2']]);
    expect(await answer.locator('b, script').count()).toBe(0);
    expect(await answer.locator('p').first().textContent()).toBe('This is bold, <b>raw</b> &amp; docs with a && b, and javascript:alert(1) (javascript:alert(1)).');

    // A reload shows the same conversation, from the server.
    await page.reload();
    await expect.poll(async () => (await page.locator('.message').count()) >= 7, SHOWN).toBe(true);
    expect(await page.locator('.message.person .text').first().textContent()).toBe('Hello <b>agent</b> & friends');
    if (SCREENSHOTS) {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOTS, 'web-chat.png') });
    }
    expect(foreign()).toEqual([]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
