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

    // A reload shows the same conversation, from the server.
    await page.reload();
    await expect.poll(async () => (await page.locator('.message').count()) >= 5, SHOWN).toBe(true);
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
