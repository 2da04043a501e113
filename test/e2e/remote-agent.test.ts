import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { type ChatMessageView, FakeTelegram } from '../fakes/telegram/index.js';
import { runMainToExit, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * One server's channels driving the agent of another (`runtime.url`), both started as `npm start`
 * starts them: the front server holds Telegram and no model; the agent server holds the model
 * and no channel. A person in Telegram sees what they see with the agent in-process: the reply
 * growing while the model streams, commands answered, and a sentence when the agent server is
 * gone.
 */

const WORKING = 'Working on it...';
const CURSOR = ' ▉';
const AGENT_SERVER_TOKEN = 'agent-server-operator-token-0123456789';

let telegram: FakeTelegram;
let model: FakeOpenAI;
let agentServer: ServerProcess | undefined;
let frontServer: ServerProcess | undefined;
let agentHost: string;
let nextChat = 7100;

/** Sends `text` in a fresh private chat (or `chatId`) and resolves with the bot's reply once `isFinal` holds for it. */
async function ask(text: string, isFinal: (reply: ChatMessageView) => boolean, chatId = nextChat++): Promise<ChatMessageView> {
  const sent = telegram.sendUserMessage({ chatId, chatType: 'private', text });
  return telegram.waitFor(() => {
    const reply = telegram.botMessages(chatId).find((m) => m.replyTo === sent.message_id);
    return reply !== undefined && isFinal(reply) ? reply : undefined;
  }, 60_000);
}

describe('a server whose agent runs on another server (runtime.url)', () => {
  beforeAll(async () => {
    telegram = new FakeTelegram();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([telegram.start(), model.start()]);
    agentServer = await startServerProcess([
      '--config',
      writeConfig(`server: { port: 0 }
auth: { admin_token: ${AGENT_SERVER_TOKEN} }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
  - { name: fast, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
memory: { enabled: false }
`).path,
    ]);
    agentHost = new URL(agentServer.url).host;
    frontServer = await startServerProcess(
      [
        '--config',
        writeConfig(`server: { port: 0 }
runtime: { url: "${agentServer.url}/api", api_key: $AGENT_SERVER_KEY }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`).path,
      ],
      { env: { AGENT_SERVER_KEY: AGENT_SERVER_TOKEN } },
    );
  }, 300_000);
  afterAll(async () => {
    await Promise.allSettled([frontServer?.stop(), agentServer?.stop()]);
    await Promise.all([telegram.stop(), model.stop()]);
  });

  it("reports in /health that the agent runs on the agent server, with that server's models", async () => {
    const health = (await (await fetch(`${frontServer?.url}/health`)).json()) as Record<string, unknown>;
    expect(health.runtime).toEqual({ kind: 'remote', host: agentHost });
    expect(health.model).toEqual({ configured: true, models: ['default', 'fast'], checks: {} });
    // The shell is the agent server's: this one has none to report.
    expect(health.sandbox).toBeUndefined();
  });

  it('shows Working on it..., grows the reply in place while the remote model streams, then the final answer', async () => {
    const words = Array.from({ length: 20 }, (_, i) => `word${i} `);
    model.enqueue({ chunks: words, chunkDelayMs: 120 });
    const requestsBefore = model.requests.length;
    const final = await ask('Tell me a story', (reply) => reply.text === words.join(''));

    expect(final.history[0]).toBe(WORKING);
    const partials = final.history.slice(1, -1);
    expect(partials.length).toBeGreaterThanOrEqual(2);
    for (const partial of partials) {
      expect(partial.endsWith(CURSOR)).toBe(true);
      expect(words.join('').startsWith(partial.slice(0, -CURSOR.length))).toBe(true);
    }
    // One model call, made by the agent server for this message.
    expect(model.requests.length - requestsBefore).toBe(1);
    expect(JSON.stringify(model.requests.at(-1)?.messages)).toContain('Tell me a story');
  });

  it('keeps one conversation on the agent server across messages of a chat', async () => {
    const chatId = nextChat++;
    model.enqueue({ text: 'Noted: the code is 4417.' });
    await ask('Remember the code 4417', (reply) => reply.text === 'Noted: the code is 4417.', chatId);
    model.enqueue({ text: 'The code is 4417.' });
    await ask('What was the code?', (reply) => reply.text === 'The code is 4417.', chatId);
    // The second request carries the first turn: the thread lives on the agent server.
    expect(JSON.stringify(model.requests.at(-1)?.messages)).toContain('Remember the code 4417');
  });

  it('answers /models, /goal and /memory through the agent server', async () => {
    const chatId = nextChat++;
    expect((await ask('/models', (reply) => reply.text.startsWith('Available models'), chatId)).text).toBe('Available models:\n• default\n• fast');
    // The agent server's evaluator cannot judge it yet, so the goal stays set there.
    const verdict = { verdict: 'needs_user_input', reason: 'the audience is unknown', evidence: 'the question' };
    model.enqueue({ text: 'Who are the notes for?' }, { text: JSON.stringify(verdict) });
    await ask('/goal write the release notes', (reply) => reply.text === 'Who are the notes for?', chatId);
    expect((await ask('/goal', (reply) => reply.text.startsWith('Goal'), chatId)).text).toBe('Goal: write the release notes');
    expect((await ask('/goal clear', (reply) => reply.text !== WORKING, chatId)).text).toBe('Goal cleared.');
    expect((await ask('/memory', (reply) => reply.text.startsWith('Memory'), chatId)).text).toBe('Memory contains 0 fact(s).');
  });

  it("tells the agent a file stayed behind, and names the agent's files in the reply", async () => {
    const chatId = nextChat++;
    const path = '/mnt/user-data/outputs/summary.md';
    model.enqueue(
      { toolCalls: [{ name: 'write_file', args: { description: 'save', path, content: '# Summary\n' } }, { name: 'present_files', args: { filepaths: [path] } }] },
      { text: 'I could not open the file; here is a summary of what you said.' },
    );
    const sent = telegram.sendUserMessage({ chatId, chatType: 'private', caption: 'Summarise this', document: { bytes: Buffer.from('quarterly numbers'), fileName: 'q3.csv' } });
    const final = await telegram.waitFor(() => {
      const reply = telegram.botMessages(chatId).find((m) => m.replyTo === sent.message_id);
      return reply?.text.endsWith('summary.md') ? reply : undefined;
    }, 60_000);
    expect(final.text).toBe('I could not open the file; here is a summary of what you said.\n\nCreated File: 📎 summary.md');
    const firstRequest = model.requests.at(-2);
    expect(JSON.stringify(firstRequest?.messages)).toContain('[Telegram attachment unavailable: q3.csv (this server does not pass files to the agent server)]');
    // Neither way does a file cross: nothing was uploaded into the chat.
    expect(telegram.uploads.filter((upload) => upload.chatId === chatId)).toEqual([]);
  });

  it('refuses at start what only an in-process agent could use, naming each key', async () => {
    const config = writeConfig(`runtime: { url: "http://127.0.0.1:9/api" }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e }
channels:
  github: { enabled: true, webhook_secret: s3cret-s3cret, app_id: "1", private_key: "key" }
`);
    const { code, stderr } = await runMainToExit(['--config', config.path]);
    expect(code).not.toBe(0);
    expect(stderr).toContain('models: not used: the agent runs on the agent server at runtime.url');
    expect(stderr).toContain('channels.github: needs the agent in this process (no runtime.url)');
    const badUrl = writeConfig('runtime: { url: "http://user:pw@agent-host:8001/api" }\n');
    const refused = await runMainToExit(['--config', badUrl.path]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('runtime.url: must be the API root alone, without credentials');
    expect(refused.stderr).not.toContain('pw@');
  });

  // Last: it stops the agent server.
  it('tells the person when the agent server is gone, in a known chat and a new one', async () => {
    const chatId = nextChat++;
    model.enqueue({ text: 'Hello.' });
    await ask('Hi', (reply) => reply.text === 'Hello.', chatId);
    await agentServer?.stop();
    const unreachable = `The agent server at ${agentHost} is not reachable right now. Please try again in a moment.`;
    expect((await ask('Are you there?', (reply) => reply.text !== WORKING, chatId)).text).toBe(unreachable);
    expect((await ask('Hello?', (reply) => reply.text !== WORKING)).text).toBe(unreachable);
  });
});
