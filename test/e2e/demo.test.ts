import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadScaledMs } from '../helpers/load-scaled-timer.js';
import { runMainToExit, type ServerProcess, startServerProcess } from './server-process.js';
import { agentFinals, type WebFrame, webChat } from './web-chat-client.js';

/**
 * `npm run demo` as a newcomer runs it, with no model key and no platform: the server's bundle
 * with `--demo` (the arguments the script passes, plus `--no-open` and a free port), in a fresh
 * working directory whose `.data/demo` is the demo's data. Everything is seen through the web
 * chat, as the page sees it: a labelled answer streaming in, a file read, a file sent back, a
 * goal pursued, memory kept.
 */

const LABEL = '[demo model] ';
const CHROMIUM = '/usr/bin/chromium';
/** How long the page may take to show what the server sent: a bound against hanging, stretched on a busy machine. */
const SHOWN = { timeout: loadScaledMs(30_000) };
/** Where the browser check leaves its screenshot when `DFC_SCREENSHOTS=1`, for a person to look at. */
const SCREENSHOT = process.env.DFC_SCREENSHOTS === '1' ? join(tmpdir(), 'dfc-demo-chat.png') : undefined;
const WORKING = 'Working on it...';

let server: ServerProcess | undefined;
let browser: Browser | undefined;
let cwd: string;
const url = () => server?.url ?? '';
const chat = webChat(url, undefined);

/** The texts a reply showed, in order: its acknowledgement, each partial, its final. */
function replyTexts(frames: WebFrame[], replyId: number): string[] {
  return frames.flatMap((f) => {
    if (f.event === 'message' && f.data.id === replyId) return [f.data.text as string];
    if (f.event === 'partial' && f.data.message_id === replyId) return [f.data.text as string];
    return [];
  });
}

/**
 * Sends `text` on a page of `conversation` and resolves once the page shows `until` of its frames
 * (default: the agent's final answer), with the finals and every frame the page got.
 */
async function ask(conversation: string, text: string, options: { fileIds?: string[]; until?: (frames: WebFrame[]) => unknown } = {}) {
  // The page asks only for what comes after the conversation's last message, as a reload does.
  const held = (await chat.call('GET', `/conversations/${conversation}/messages`)).body.messages as Array<{ id: number }>;
  const page = await chat.events(conversation, held.at(-1)?.id ?? 0);
  try {
    const isAnswered = options.until ?? ((frames: WebFrame[]) => agentFinals(frames).some((final) => final !== WORKING));
    expect((await chat.send(conversation, text, options.fileIds ? { fileIds: options.fileIds } : {})).status).toBe(202);
    await page.waitFor((frames) => (isAnswered(frames) ? true : undefined));
    return { finals: agentFinals(page.frames).filter((final) => final !== WORKING), frames: page.frames };
  } finally {
    page.close();
  }
}

describe('npm run demo', () => {
  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), 'dfc-demo-'));
    server = await startServerProcess(['--demo', '--no-open', '--port', '0'], { cwd });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('says where to chat, runs on loopback with the demo model only, and keeps its data in ./.data/demo', async () => {
    const ready = server?.logs.find((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('demo ready'));
    expect(ready?.chat).toBe(`${url()}/chat`);
    expect(String(ready?.msg)).toContain(`${url()}/chat`);
    expect(new URL(url()).hostname).toBe('127.0.0.1');
    const health = (await (await fetch(`${url()}/health`)).json()) as { model: { models: string[] }; channels: Record<string, unknown> };
    expect(health.model.models).toEqual(['demo']);
    expect(Object.keys(health.channels)).toEqual(['web']);
    expect(existsSync(join(cwd, '.data', 'demo', 'pglite'))).toBe(true);
    expect(existsSync(join(cwd, '.data', 'pglite'))).toBe(false);
  });

  it('streams a labelled answer in several partials, and the first one explains the demo and how to name a real model', async () => {
    const conversation = await chat.newConversation();
    const page = await chat.events(conversation);
    expect((await chat.send(conversation, 'hello, who are you?')).status).toBe(202);
    const final = await page.waitFor((frames) => agentFinals(frames).find((text) => text !== WORKING));
    page.close();
    expect(final.startsWith(LABEL)).toBe(true);
    expect(final).toContain('hello, who are you?');
    expect(final).toContain('scripted demo model');
    expect(final).toContain('docs/configuration.md');
    const replyId = page.frames.find((f) => f.event === 'message' && f.data.author === 'agent')?.data.id as number;
    const partials = replyTexts(page.frames, replyId).slice(1, -1);
    expect(partials.length).toBeGreaterThan(1);
    for (const partial of partials) expect(final.startsWith(partial.replace(/ ▉$/, ''))).toBe(true);

    // The second answer is labelled too, without the introduction.
    const { finals } = await ask(conversation, 'tell me more');
    expect(finals[0]?.startsWith(LABEL)).toBe(true);
    expect(finals[0]).toContain('tell me more');
    expect(finals[0]).not.toContain('not a real AI');
  });

  it('reads a file the person sends and says what it holds', async () => {
    const conversation = await chat.newConversation();
    const uploaded = await chat.upload(conversation, 'shopping.txt', 'text/plain', Buffer.from('apples and pears\nbread\n'));
    expect(uploaded.status).toBe(201);
    const { finals } = await ask(conversation, 'what is in this file?', { fileIds: [uploaded.body.file.id] });
    expect(finals[0]?.startsWith(LABEL)).toBe(true);
    expect(finals[0]).toContain('shopping.txt (23 bytes)');
    expect(finals[0]).toContain('"apples and pears"');
  });

  it('writes a file when asked for one, and it arrives in the chat', async () => {
    const conversation = await chat.newConversation();
    // The file is a message of its own, after the answer.
    const withFileSent = (frames: WebFrame[]) => frames.some((f) => f.event === 'message' && f.data.author === 'agent' && f.data.files.length > 0);
    const { finals, frames } = await ask(conversation, 'please write a file for me', { until: withFileSent });
    expect(finals[0]?.startsWith(LABEL)).toBe(true);
    expect(finals[0]).toContain('demo-note.md');
    const withFile = frames.find((f) => f.event === 'message' && f.data.author === 'agent' && f.data.files.length > 0);
    const file = withFile?.data.files[0];
    expect(file?.name).toBe('demo-note.md');
    const downloaded = await chat.download(conversation, file.id);
    expect(downloaded.status).toBe(200);
    expect(downloaded.bytes.toString('utf8')).toContain('# A note from the demo model');
    expect(downloaded.bytes.toString('utf8')).toContain('please write a file for me');
  });

  it('pursues a /goal: the evaluator sends the agent back once, then finds it reached', async () => {
    const conversation = await chat.newConversation();
    const reached = (frames: WebFrame[]) => agentFinals(frames).some((final) => final.includes('the goal is reached'));
    const { finals } = await ask(conversation, '/goal plan a picnic for saturday', { until: reached });
    // The continuation the goal loop asked for is added to the same answer.
    const answer = finals.find((final) => final.includes('the goal is reached')) as string;
    expect(answer.startsWith(LABEL)).toBe(true);
    expect(answer).toContain('You wrote: "plan a picnic for saturday"');
    expect(answer).toContain(`${LABEL}Continuing with the goal "plan a picnic for saturday"`);
    // Reached, so cleared.
    const { finals: shown } = await ask(conversation, '/goal');
    expect(shown).toEqual(['No active goal.']);
  });

  it('remembers a person after a conversation, and /memory shows it', async () => {
    const conversation = await chat.newConversation();
    const seen = new Set(server?.logs);
    await ask(conversation, 'I like green tea in the morning');
    // Memory is updated a moment after a conversation goes quiet; other conversations' updates may come first.
    let finals: string[] = [];
    for (let updates = 0; updates < 6 && !finals[0]?.includes('green tea'); updates++) {
      const update = await server?.waitForLog((entry) => entry.msg === 'memory updated' && !seen.has(entry), 60_000);
      seen.add(update as Record<string, unknown>);
      ({ finals } = await ask(conversation, '/memory'));
    }
    expect(finals[0]).toMatch(/^Memory contains \d+ fact\(s\)\./);
    expect(finals[0]).toContain('Tried deerflow-channels with the scripted demo model.');
    expect(finals[0]).toContain('I like green tea in the morning');
  });

  it('shows the streamed, labelled answer and the file it writes in the chat page of a real browser', async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    const foreign: string[] = [];
    const errors: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(url()) && !request.url().startsWith('blob:')) foreign.push(request.url());
    });
    page.on('pageerror', (error) => errors.push(error.message));
    // CSP violations are reported on the console only.
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) errors.push(message.text());
    });
    try {
      await page.goto(`${url()}/chat`);
      await page.getByLabel('Message').fill('hello from the browser');
      await page.getByLabel('Message').press('Enter');
      const answer = page.locator('.message.agent .text').last();
      await expect.poll(async () => (await answer.textContent()) ?? '', SHOWN).toContain('hello from the browser');
      // The page opens the latest conversation, whose first answer came before: this one ends with the plain answer.
      await expect.poll(async () => (await answer.textContent()) ?? '', SHOWN).toMatch(/as they do with a real model\.$/);
      expect(await answer.textContent()).toMatch(/^\[demo model\] /);

      await page.getByLabel('Message').fill('write a file please');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByRole('button', { name: /demo-note\.md/ }).waitFor(SHOWN);
      if (SCREENSHOT) await page.screenshot({ path: SCREENSHOT });
      expect(foreign).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('refuses options that do not go together, and a port that is none, naming them (exit code 2)', async () => {
    const withConfig = await runMainToExit(['--demo', '--config', 'config.yaml']);
    expect(withConfig.code).toBe(2);
    expect(withConfig.stderr).toContain('--demo runs on its own configuration: it takes no --config');
    const noDemo = await runMainToExit(['--no-open']);
    expect(noDemo.code).toBe(2);
    expect(noDemo.stderr).toContain('--no-open and --port go with --demo');
    const badPort = await runMainToExit(['--demo', '--no-open', '--port', 'eighty']);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toContain('server.port');
  });
});
