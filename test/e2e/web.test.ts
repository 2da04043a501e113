import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeChatRequest } from '../fakes/openai/index.js';
import { FakeSearchProvider } from '../fakes/search/index.js';
import { startTelegramChat, type TelegramSetup } from './telegram-setup.js';

/**
 * The web tools as `web:` in the config file turns them on, through the real server and
 * Telegram: a search through a fake Tavily, a page read from a server the operator let through
 * (`allow_networks`), and the answer in the chat.
 */

const CHAT_ID = 9300;
const TAVILY_KEY = 'tvly-e2e-key';

let setup: TelegramSetup | undefined;
let search: FakeSearchProvider;
let pages: Server;
let pageUrl: string;

describe('the web, from a Telegram chat', () => {
  beforeAll(async () => {
    search = new FakeSearchProvider({ apiKey: TAVILY_KEY });
    await search.start();
    pages = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><head><title>Menu</title></head><body><article><h1>Lunch today</h1><p>Mushroom risotto with a green salad, served from noon.</p></article></body></html>');
    });
    await new Promise<void>((listening) => pages.listen(0, '127.0.0.1', listening));
    pageUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}/menu`;
    setup = await startTelegramChat(
      '',
      `web:
  search: { provider: tavily, base_url: "${search.baseURL}", api_key: ${TAVILY_KEY} }
  fetch: { enabled: true, allow_networks: [127.0.0.1/32] }
`,
    );
  });
  afterAll(async () => {
    await setup?.stop();
    await search?.stop();
    await new Promise((closed) => pages?.close(closed));
  });

  it('searches, reads the page, and answers in the chat', async () => {
    const { telegram, model } = setup as TelegramSetup;
    search.results = [{ title: 'Canteen menu', url: pageUrl, content: 'Today’s lunch.' }];
    model.enqueue(
      { toolCalls: [{ name: 'web_search', args: { query: 'canteen lunch today' } }] },
      { toolCalls: [{ name: 'web_fetch', args: { url: pageUrl } }] },
      { text: 'Mushroom risotto, from noon.' },
    );
    const sent = telegram.sendUserMessage({ chatId: CHAT_ID, chatType: 'private', text: 'What is for lunch?' });
    await telegram.waitFor(() => telegram.botMessages(CHAT_ID).find((m) => m.replyTo === sent.message_id && m.text === 'Mushroom risotto, from noon.'), 30_000);

    const last = model.requests.at(-1) as FakeChatRequest;
    const results = last.messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
    expect(results[0]).toContain('Canteen menu');
    expect(results[1]).toContain('Mushroom risotto with a green salad, served from noon.');
    expect(search.requests[0]?.headers.authorization).toBe(`Bearer ${TAVILY_KEY}`);
  }, 60_000);
});
