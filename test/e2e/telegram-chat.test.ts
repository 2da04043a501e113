import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { type ChatMessageView, FakeTelegram } from '../fakes/telegram/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The whole server as a Telegram user meets it: `src/main.ts` with a config file, the real grammY
 * against a fake Bot API, the real ChatOpenAI against a fake model. Assertions are about what the
 * chat shows.
 */

const WORKING = 'Working on it...';
const CURSOR = ' ▉';

let telegram: FakeTelegram;
let model: FakeOpenAI;
let server: ServerProcess;
let nextChat = 5000;

function configYaml(extra = ''): string {
  return `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
  - { name: fast, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
${extra}`;
}

/** The bot's reply to a user message: the message that replies to it. */
function replyTo(chatId: number, userMessageId: number): ChatMessageView | undefined {
  return telegram.botMessages(chatId).find((m) => m.replyTo === userMessageId);
}

async function finalReply(chatId: number, userMessageId: number, finalText: string, timeoutMs = 15_000): Promise<ChatMessageView> {
  return telegram.waitFor(() => {
    const reply = replyTo(chatId, userMessageId);
    return reply?.text === finalText ? reply : undefined;
  }, timeoutMs);
}

describe('chatting in Telegram', () => {
  let chatId: number;

  beforeAll(async () => {
    telegram = new FakeTelegram();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([telegram.start(), model.start()]);
    // One server for every case, the shutdown last (`extra` lands inside the `channels:` block).
    server = await startServerProcess(['--config', writeConfig(configYaml('  shutdown_grace_period_seconds: 1\n')).path]);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([telegram.stop(), model.stop()]);
  });
  beforeEach(() => {
    chatId = nextChat++;
  });
  afterEach(() => {
    expect(telegram.rateLimitViolations).toEqual([]);
  });

  it('shows Working on it... at once, grows the reply in place while the model streams, then the final answer', async () => {
    const words = Array.from({ length: 24 }, (_, i) => `word${i} `);
    model.enqueue({ chunks: words, chunkDelayMs: 120 });
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'Tell me a story' });
    const final = await finalReply(chatId, question.message_id, words.join(''));

    expect(final.history[0]).toBe(WORKING);
    const partials = final.history.slice(1, -1);
    expect(partials.length).toBeGreaterThanOrEqual(2);
    for (const partial of partials) {
      expect(partial.endsWith(CURSOR)).toBe(true);
      expect(words.join('').startsWith(partial.slice(0, -CURSOR.length))).toBe(true);
    }
    // Partial edits in a private chat are at least a second apart.
    const partialTimes = final.editedAt.slice(0, partials.length);
    for (let i = 1; i < partialTimes.length; i++) expect(partialTimes[i]! - partialTimes[i - 1]!).toBeGreaterThanOrEqual(1000);
    expect(final.text.endsWith(CURSOR)).toBe(false);
    expect(telegram.botMessages(chatId)).toHaveLength(1);
  });

  it('keeps one conversation per private chat, and /new starts another', async () => {
    const first = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'my name is Ada' });
    await finalReply(chatId, first.message_id, 'Echo: my name is Ada');
    const second = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'what is my name?' });
    await finalReply(chatId, second.message_id, 'Echo: what is my name?');
    const lastRequest = model.requests.at(-1);
    expect(lastRequest?.messages.map((m) => m.content)).toContain('my name is Ada');

    const status = telegram.sendUserMessage({ chatId, chatType: 'private', text: '/status' });
    const statusReply = await telegram.waitFor(() => replyTo(chatId, status.message_id));
    expect(statusReply.text).toMatch(/^Active thread: [0-9a-f-]{36}$/);
    expect(statusReply.history).toEqual([statusReply.text]);

    const reset = telegram.sendUserMessage({ chatId, chatType: 'private', text: '/new' });
    expect((await telegram.waitFor(() => replyTo(chatId, reset.message_id))).text).toBe('New conversation started.');
    const third = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'fresh start' });
    await finalReply(chatId, third.message_id, 'Echo: fresh start');
    expect(model.requests.at(-1)?.messages.map((m) => m.content)).not.toContain('my name is Ada');

    const status2 = telegram.sendUserMessage({ chatId, chatType: 'private', text: '/status' });
    const statusReply2 = await telegram.waitFor(() => replyTo(chatId, status2.message_id));
    expect(statusReply2.text).not.toBe(statusReply.text);
  });

  it('answers /help, /models, /cmd@bot and unknown commands, and lists the commands in the menu', async () => {
    expect(telegram.commands).toEqual([
      { command: 'bootstrap', description: 'Start a bootstrap session (enables agent setup)' },
      { command: 'goal', description: 'Set, show, or clear an active goal' },
      { command: 'schedule', description: 'Run a task on a schedule and post the result here' },
      { command: 'new', description: 'Start a new conversation' },
      { command: 'status', description: 'Show current thread info' },
      { command: 'agent', description: 'List the agents you can talk to, or switch to one' },
      { command: 'models', description: 'List available models' },
      { command: 'memory', description: 'Show memory status' },
      { command: 'help', description: 'Show this help' },
    ]);
    const help = telegram.sendUserMessage({ chatId, chatType: 'private', text: '/help' });
    expect((await telegram.waitFor(() => replyTo(chatId, help.message_id))).text).toBe(
      [
        'Available commands:',
        '/bootstrap — Start a bootstrap session (enables agent setup)',
        '/goal [condition|clear] — Set, show, or clear an active goal',
        '/schedule <when> <task> | list | cancel <id> — Run a task on a schedule and post the result here',
        '/new — Start a new conversation',
        '/status — Show current thread info',
        '/agent [name] — List the agents you can talk to, or switch to one',
        '/models — List available models',
        '/memory [clear] — Show memory status',
        '/<skill-name> <task> — Activate an enabled skill for one turn',
        '/help — Show this help',
      ].join('\n'),
    );
    const models = telegram.sendUserMessage({ chatId, chatType: 'private', text: `/models@${telegram.botInfo.username}` });
    expect((await telegram.waitFor(() => replyTo(chatId, models.message_id))).text).toBe('Available models:\n• default\n• fast');
    // A slash word that is neither a command nor an installed skill gets the unknown-command reply.
    const skill = telegram.sendUserMessage({ chatId, chatType: 'private', text: '/deploy now' });
    await finalReply(chatId, skill.message_id, 'Unknown command: /deploy. Available commands: /agent | /bootstrap | /goal | /help | /memory | /models | /new | /schedule | /status');
    // Paths are not slash words: chat.
    const path = telegram.sendUserMessage({ chatId, chatType: 'private', text: '/etc/hosts has a typo' });
    await finalReply(chatId, path.message_id, 'Echo: /etc/hosts has a typo');
  });

  it('splits a final answer past 4096 characters into follow-up messages', async () => {
    const long = `${'a'.repeat(4000)}\n${'b'.repeat(3000)}`;
    model.enqueue({ chunks: [long] });
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'long please' });
    // Cut at the line break; the part shows without it (a paragraph's last line break is not text).
    const first = await finalReply(chatId, question.message_id, 'a'.repeat(4000));
    const second = await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.replyTo === first.messageId));
    expect(second.text).toBe('b'.repeat(3000));
  });

  it('says an answer was cut off when the model stream breaks mid-answer, shows the error text when it fails, and the next message works', async () => {
    model.enqueue({ chunks: ['I was saying', ' something', ' else'], failAfterChunks: 1 });
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'fail please' });
    await finalReply(chatId, question.message_id, 'I was saying\n\n(This answer was cut off: the model stopped before it finished. Please ask again.)');
    model.enqueue({ fail: { status: 500 } });
    const again = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'fail again' });
    await finalReply(chatId, again.message_id, 'An error occurred while processing your request. Please try again.');
    // A refused key is named, so the person knows it is not worth trying again.
    model.enqueue({ fail: { status: 401, message: 'Incorrect API key provided: sk-e2e' } });
    const refused = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'and now?' });
    await finalReply(chatId, refused.message_id, "The model service refused this server's key. Ask the operator to check the model's api_key.");
    const after = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'are you ok?' });
    await finalReply(chatId, after.message_id, 'Echo: are you ok?');
  });

  it('says an answer was cut off when the model stream ends early without a finish reason', async () => {
    model.enqueue({ chunks: ['I was saying', ' something', ' else'], endAfterChunks: 2 });
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'stop early please' });
    await finalReply(
      chatId,
      question.message_id,
      'I was saying something\n\n(This answer was cut off: the model stopped before it finished. Please ask again.)',
    );
  });

  it('asks the model again when its stream ends before any text, and shows the second answer', async () => {
    const asked = model.requests.length;
    model.enqueue({ chunks: ['never shown'], endAfterChunks: 0 }, { chunks: ['Second ', 'try.'] });
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'cut before a word' });
    await finalReply(chatId, question.message_id, 'Second try.');
    expect(model.requests.length - asked).toBe(2);
  });

  it("never shows a reasoning model's <think> text, while it streams or in the final", async () => {
    model.enqueue({ chunks: ['<think>', 'the person wants ', 'a secret plan', '</think>', '\n\nThe ', 'visible ', 'answer.'], chunkDelayMs: 250 });
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'think first' });
    const final = await finalReply(chatId, question.message_id, 'The visible answer.');
    expect(final.history.join('\n')).not.toMatch(/secret plan|<\/?think>/);
  });

  it('answers a redelivered update once', async () => {
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'only once' });
    await finalReply(chatId, question.message_id, 'Echo: only once');
    const requestsBefore = model.requests.length;
    telegram.pushUpdate({ message: question as Parameters<typeof telegram.pushUpdate>[0]['message'] });
    const marker = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'next' });
    await finalReply(chatId, marker.message_id, 'Echo: next');
    expect(model.requests.length).toBe(requestsBefore + 1);
    expect(telegram.botMessages(chatId).filter((m) => m.text === 'Echo: only once')).toHaveLength(1);
  });

  it('starts a new conversation per group message and continues one when replying to it', async () => {
    const groupId = -chatId;
    const first = telegram.sendUserMessage({ chatId: groupId, chatType: 'supergroup', text: 'topic one' });
    await finalReply(groupId, first.message_id, 'Echo: topic one');
    const followUp = telegram.sendUserMessage({ chatId: groupId, chatType: 'supergroup', text: 'more on it', replyToMessageId: first.message_id });
    await finalReply(groupId, followUp.message_id, 'Echo: more on it');
    expect(model.requests.at(-1)?.messages.map((m) => m.content)).toContain('topic one');
    const other = telegram.sendUserMessage({ chatId: groupId, chatType: 'supergroup', text: 'unrelated' });
    await finalReply(groupId, other.message_id, 'Echo: unrelated');
    expect(model.requests.at(-1)?.messages.map((m) => m.content)).not.toContain('topic one');
  });

  it('handles a 64 KB message without crashing', async () => {
    const big = 'x'.repeat(64 * 1024);
    model.enqueue({ text: 'That was long.' });
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: big });
    await finalReply(chatId, question.message_id, 'That was long.');
    expect(model.requests.at(-1)?.messages.at(-1)?.content).toBe(big);
  });

  // Last: it stops the server the other cases share.
  it('replaces Working on it... with what was written so far and says the answer was cut short', async () => {
    model.enqueue({ chunks: Array.from({ length: 60 }, (_, i) => `part${i} `), chunkDelayMs: 100 });
    const question = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'a long one' });
    await telegram.waitFor(() => replyTo(chatId, question.message_id)?.history.some((t) => t.endsWith(CURSOR)), 10_000);
    expect(await server.stop()).toBe(0);
    const reply = replyTo(chatId, question.message_id);
    expect(reply?.text).toMatch(/^part0 part1 [\s\S]*\n\n\(The server restarted before this answer was finished\. Please ask again\.\)$/);
  });
});

describe('without a model', () => {
  beforeAll(async () => {
    telegram = new FakeTelegram();
    await telegram.start();
    const { path } = writeConfig(
      `server: { port: 0 }\nchannels:\n  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }\n`,
    );
    server = await startServerProcess(['--config', path]);
  });
  afterAll(async () => {
    await server?.stop();
    await telegram.stop();
  });

  it('tells the user no model is configured, and /health says so', async () => {
    const question = telegram.sendUserMessage({ chatId: 42, chatType: 'private', text: 'hello?' });
    // The server's text marks `models:` as code: Telegram shows it in monospace, without the backticks.
    const told = await finalReply(42, question.message_id, 'No model is configured on this server. Ask the operator to add one under models: in config.yaml.');
    expect(told.entities).toEqual([{ type: 'code', offset: 73, length: 7 }]);
    const health = (await (await fetch(`${server.url}/health`)).json()) as Record<string, unknown>;
    expect(health.model).toEqual({ configured: false, models: [], checks: {} });
    expect(health.channels).toEqual({ telegram: { running: true }, web: { running: true } });
  });

  it('counts that message for Prometheus at /metrics, with no message text in it', async () => {
    const response = await fetch(`${server.url}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const body = await response.text();
    expect(body).toContain('deerflow_inbound_messages_total{channel="telegram",result="accepted"} 1');
    expect(body).toContain('deerflow_replies_total{channel="telegram",outcome="failed"} 1');
    expect(body).toContain('deerflow_channel_running{channel="telegram"} 1');
    expect(body).not.toContain('hello?');
  });
});
