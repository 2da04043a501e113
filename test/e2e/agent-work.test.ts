import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  echoResponder,
  type FakeChatMessage,
  type FakeChatRequest,
  FakeOpenAI,
  type FakeReply,
  type FakeResponder,
  type FakeToolCall,
  lastUserText,
} from '../fakes/openai/index.js';
import { type ChatMessageView, FakeTelegram } from '../fakes/telegram/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The agent at work, as a Telegram user meets it: shell commands, files both ways, questions
 * back, memory, goals and slash skills. The real server (`src/main.ts`) runs against a fake Bot
 * API and a fake model; assertions are about what the chat shows and what the model received.
 *
 * One model script serves the whole file: memory extraction and goal evaluation are recognised by
 * their system prompts, everything else is the chat turn of the running test (`chat`). Nothing is
 * queued with `enqueue`, because a memory extraction of an earlier turn may reach the model at any
 * moment and would take a queued answer.
 */

const WORKING = 'Working on it...';
/** Opening of the memory extraction prompt (src/agent/memory/extraction.ts). */
const EXTRACTION_PROMPT = 'You maintain the long-term memory a chat assistant keeps about one user.';
/** Opening of the goal evaluator prompt (src/agent/goals/evaluator.ts). */
const EVALUATOR_PROMPT = 'You judge whether an AI assistant has achieved a goal the user set for a conversation.';
const UNKNOWN_COMMAND_TAIL = 'Available commands: /agent | /bootstrap | /goal | /help | /memory | /models | /new | /schedule | /status';
/** Private chats: the chat id is the sender's user id, so these are both. All are allow-listed. */
const TRUSTED_USERS = Array.from({ length: 40 }, (_, i) => 7000 + i);
/** A valid 1×1 PNG (one red pixel), built by hand from the spec's IHDR, IDAT and IEND chunks. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';
/** What the user says that the extraction script turns into a fact. */
const TABS_STATEMENT = 'I always indent with tabs, never with spaces.';
const TABS_FACT = 'Prefers tabs over spaces';

let telegram: FakeTelegram;
let model: FakeOpenAI;
let server: ServerProcess;
let nextUser = 0;
/** The chat model of the running test. */
let chat: FakeResponder;
/** Chat requests of the running test, in arrival order (extraction and evaluator calls left out). */
let chatRequests: FakeChatRequest[];
/** Evaluator answers, first in first out; `satisfied` once empty. */
let verdicts: string[];

function textOf(message: FakeChatMessage | undefined): string {
  if (!message || message.content === null) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => part.text ?? '').join('');
}

function systemPromptOf(request: FakeChatRequest): string {
  return textOf(request.messages.find((m) => m.role === 'system' || m.role === 'developer'));
}

function toolNamesOf(request: FakeChatRequest | undefined): string[] {
  return (request?.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
}

/** Tool results the model has seen since the user's last message: one per step of this turn. */
function toolResultsOfTurn(request: FakeChatRequest): string[] {
  const lastUser = request.messages.findLastIndex((m) => m.role === 'user');
  return request.messages.slice(lastUser + 1).filter((m) => m.role === 'tool').map(textOf);
}

/** A turn that makes `calls`, one model step each, then answers with `final` of the tool results. */
function toolTurn(calls: FakeToolCall[], final: (results: string[]) => string): FakeResponder {
  return (request) => {
    const results = toolResultsOfTurn(request);
    const next = calls[results.length];
    return next ? { toolCalls: [next] } : { text: final(results) };
  };
}

/** The extraction answer: the tabs fact when the conversation's newest user turn states it, else no change. */
function extractionAnswer(request: FakeChatRequest): FakeReply {
  const input = textOf(request.messages.at(-1));
  const newestUserTurn = input.slice(input.lastIndexOf('User: '));
  const newFacts = newestUserTurn.includes(TABS_STATEMENT) ? [{ content: TABS_FACT, category: 'preference', confidence: 0.9 }] : [];
  return { text: JSON.stringify({ user: { workContext: '', personalContext: '', topOfMind: '' }, newFacts, factsToRemove: [] }) };
}

function routeModelCall(request: FakeChatRequest): FakeReply | Promise<FakeReply> {
  const system = systemPromptOf(request);
  if (system.startsWith(EXTRACTION_PROMPT)) return extractionAnswer(request);
  if (system.startsWith(EVALUATOR_PROMPT)) {
    return { text: verdicts.shift() ?? JSON.stringify({ verdict: 'satisfied', reason: 'done', evidence: 'the last reply' }) };
  }
  chatRequests.push(request);
  return chat(request);
}

function configYaml(allowedUsers: readonly number[]): string {
  return `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
memory: { debounce_seconds: 0 }
channels:
  telegram:
    enabled: true
    bot_token: "${telegram.token}"
    api_root: "${telegram.apiRoot}"
    polling_timeout_seconds: 1
    allowed_users: [${allowedUsers.join(', ')}]
`;
}

async function startAll(allowedUsers: readonly number[]): Promise<void> {
  telegram = new FakeTelegram();
  model = new FakeOpenAI({ apiKey: 'sk-e2e' });
  model.respond = routeModelCall;
  await Promise.all([telegram.start(), model.start()]);
  server = await startServerProcess(['--config', writeConfig(configYaml(allowedUsers)).path]);
}

async function stopAll(): Promise<void> {
  await server?.stop();
  await Promise.all([telegram?.stop(), model?.stop()]);
}

function newUser(): number {
  const id = TRUSTED_USERS[nextUser++];
  if (id === undefined) throw new Error('out of allow-listed test users; add more to TRUSTED_USERS');
  return id;
}

/** The bot's reply to a user message: the message that replies to it. */
function replyTo(chatId: number, userMessageId: number): ChatMessageView | undefined {
  return telegram.botMessages(chatId).find((m) => m.replyTo === userMessageId && m.attachment === undefined);
}

async function finalReply(chatId: number, userMessageId: number, finalText: string, timeoutMs = 15_000): Promise<ChatMessageView> {
  return telegram.waitFor(() => {
    const reply = replyTo(chatId, userMessageId);
    return reply?.text === finalText ? reply : undefined;
  }, timeoutMs);
}

function say(chatId: number, text: string) {
  return telegram.sendUserMessage({ chatId, chatType: 'private', text });
}

/** Sends a command and resolves with the text of the bot's reply. */
async function command(chatId: number, text: string): Promise<string> {
  const sent = say(chatId, text);
  return (await telegram.waitFor(() => replyTo(chatId, sent.message_id))).text;
}

describe('the agent at work, for allow-listed Telegram users', () => {
  let chatId: number;

  beforeAll(() => startAll(TRUSTED_USERS));
  afterAll(stopAll);
  beforeEach(() => {
    chatId = newUser();
    chat = echoResponder;
    chatRequests = [];
    verdicts = [];
  });
  afterEach(() => {
    expect(telegram.rateLimitViolations).toEqual([]);
  });

  it('runs a shell command and answers from what it printed', async () => {
    chat = toolTurn([{ name: 'bash', args: { description: 'greet', command: 'echo hello-e2e && uname -s' } }], ([output]) => {
      return `The command printed: ${output?.trim()}`;
    });
    const question = say(chatId, 'run a command');
    const kernel = execFileSync('uname', ['-s'], { encoding: 'utf8' }).trim();
    const final = await finalReply(chatId, question.message_id, `The command printed: hello-e2e\n${kernel}`);

    expect(final.history[0]).toBe(WORKING);
    expect(toolNamesOf(chatRequests[0])).toContain('bash');
  });

  it('writes a file and sends it back as a document after the answer', async () => {
    const notes = 'Meeting notes\n- ship #3\n- write the e2e tests\n';
    const path = '/mnt/user-data/outputs/notes.txt';
    chat = toolTurn(
      [
        { name: 'write_file', args: { description: 'save the notes', path, content: notes } },
        { name: 'present_files', args: { filepaths: [path] } },
      ],
      (results) => (results.some((r) => r.startsWith('Error')) ? `Tools failed: ${results.join(' | ')}` : 'Saved your notes.'),
    );
    const question = say(chatId, 'write down my notes');
    const final = await finalReply(chatId, question.message_id, 'Saved your notes.\n\nCreated File: 📎 notes.txt');
    const upload = await telegram.waitFor(() => telegram.uploads.find((u) => u.chatId === chatId));

    expect(upload).toMatchObject({ method: 'sendDocument', fileName: 'notes.txt', replyTo: question.message_id });
    expect(upload.bytes.toString('utf8')).toBe(notes);
    expect(telegram.botMessages(chatId).find((m) => m.attachment !== undefined)?.attachment).toMatchObject({
      kind: 'document',
      fileName: 'notes.txt',
    });
    // The file follows the final text, never the other way round.
    const finalEdit = telegram.calls.findIndex(
      (c) => c.method === 'editMessageText' && c.params.chat_id === chatId && c.params.text === final.text,
    );
    const documentSent = telegram.calls.findIndex((c) => c.method === 'sendDocument' && c.params.chat_id === chatId);
    expect(finalEdit).toBeGreaterThanOrEqual(0);
    expect(documentSent).toBeGreaterThan(finalEdit);
  });

  it('sends a PNG the agent made with bash as a photo', async () => {
    const path = '/mnt/user-data/outputs/dot.png';
    chat = toolTurn(
      [
        { name: 'bash', args: { description: 'draw', command: `printf '%s' '${PNG_BASE64}' | base64 -d > ${path}` } },
        { name: 'present_files', args: { filepaths: [path] } },
      ],
      (results) => (results.some((r) => r.startsWith('Error')) ? `Tools failed: ${results.join(' | ')}` : 'Here is your dot.'),
    );
    const question = say(chatId, 'draw a dot');
    await finalReply(chatId, question.message_id, 'Here is your dot.\n\nCreated File: 📎 dot.png');
    const upload = await telegram.waitFor(() => telegram.uploads.find((u) => u.chatId === chatId));

    expect(upload).toMatchObject({ method: 'sendPhoto', replyTo: question.message_id });
    expect(upload.bytes.equals(Buffer.from(PNG_BASE64, 'base64'))).toBe(true);
    expect(telegram.botMessages(chatId).find((m) => m.attachment !== undefined)?.attachment?.kind).toBe('photo');
  });

  it('asks a question, and the next message reaches the model as the answer', async () => {
    const question = 'Which environment should I deploy to?';
    chat = (request) =>
      lastUserText(request.messages) === 'deploy it'
        ? {
            toolCalls: [
              { name: 'ask_clarification', args: { question, clarification_type: 'missing_info', options: ['staging', 'production'] } },
            ],
          }
        : { text: `Deploying to ${lastUserText(request.messages)}.` };
    const ask = say(chatId, 'deploy it');
    await finalReply(chatId, ask.message_id, `${question}\n\n1. staging\n2. production`);

    const answer = say(chatId, 'staging');
    await finalReply(chatId, answer.message_id, 'Deploying to staging.');
    const messages = chatRequests.at(-1)?.messages ?? [];
    const asked = messages.findIndex((m) => m.role === 'tool' && textOf(m).startsWith(question));
    expect(asked).toBeGreaterThan(0);
    expect(messages[asked - 1]?.tool_calls?.[0]?.function.name).toBe('ask_clarification');
    expect(messages.at(-1)).toMatchObject({ role: 'user', content: 'staging' });
  });

  it('saves a document the user sends, lists it to the model and lets it read the exact bytes', async () => {
    const csv = 'region,amount\nnorth,10\nsouth,20\n';
    const path = '/mnt/user-data/uploads/sales.csv';
    chat = toolTurn([{ name: 'read_file', args: { description: 'look at the upload', path } }], ([content]) => {
      return `Read ${content?.length ?? 0} characters.`;
    });
    const sent = telegram.sendUserDocument({
      chatId,
      chatType: 'private',
      caption: 'summarise this',
      document: { bytes: Buffer.from(csv), fileName: 'sales.csv', mimeType: 'text/csv' },
    });
    await finalReply(chatId, sent.message_id, `Read ${csv.length} characters.`);

    const [first, second] = chatRequests;
    expect(first?.messages.at(-1)).toMatchObject({ role: 'user', content: 'summarise this' });
    expect(systemPromptOf(first as FakeChatRequest)).toContain(
      `<current_uploads>\nThe user sent these files with this message:\n- ${path} (${csv.length} bytes)\n</current_uploads>`,
    );
    expect(second?.messages.at(-1)).toMatchObject({ role: 'tool', content: csv });
  });

  it('tells the model a document over 20 MB could not be fetched', async () => {
    const sent = telegram.sendUserDocument({
      chatId,
      chatType: 'private',
      caption: 'here is the archive',
      document: { bytes: Buffer.from('PK'), declaredSize: 25_000_000, fileName: 'big.zip', mimeType: 'application/zip' },
    });
    const expected = 'here is the archive\n[Telegram attachment unavailable: big.zip (exceeds the 20 MB download limit)]';
    await finalReply(chatId, sent.message_id, `Echo: ${expected}`);

    expect(chatRequests[0]?.messages.at(-1)).toMatchObject({ role: 'user', content: expected });
    expect(systemPromptOf(chatRequests[0] as FakeChatRequest)).not.toContain('<current_uploads>');
  });

  it('remembers a fact per user, shows it with /memory, puts it in the prompt, and forgets it on /memory clear', async () => {
    const stated = say(chatId, TABS_STATEMENT);
    await finalReply(chatId, stated.message_id, `Echo: ${TABS_STATEMENT}`);
    // Extraction runs in the background after the run; its log line is the only sign it ended.
    await server.waitForLog((entry) => entry.msg === 'memory updated' && entry.userId === String(chatId) && entry.factsAdded === 1);

    expect(await command(chatId, '/memory')).toBe(`Memory contains 1 fact(s).\n• ${TABS_FACT}`);
    const next = say(chatId, 'format this for me');
    await finalReply(chatId, next.message_id, 'Echo: format this for me');
    expect(systemPromptOf(chatRequests.at(-1) as FakeChatRequest)).toContain(`<memory>\nFacts:\n- [preference] ${TABS_FACT}\n</memory>`);

    const otherUser = newUser();
    expect(await command(otherUser, '/memory')).toBe('Memory contains 0 fact(s).');
    const otherTurn = say(otherUser, 'format this for me too');
    await finalReply(otherUser, otherTurn.message_id, 'Echo: format this for me too');
    expect(systemPromptOf(chatRequests.at(-1) as FakeChatRequest)).not.toContain('<memory>');

    expect(await command(chatId, '/memory clear')).toBe('Memory cleared: 1 fact(s) forgotten.');
    expect(await command(chatId, '/memory')).toBe('Memory contains 0 fact(s).');
  });

  it('pursues a goal with a hidden continuation until the evaluator is satisfied, then clears it', async () => {
    const firstStep = 'Haiku one:\nan old silent pond';
    const secondStep = 'Haiku two:\nautumn moonlight\n\nHaiku three:\nover the wintry forest';
    chat = (request) => (textOf(request.messages.at(-1)).includes('<goal_continuation>') ? { text: secondStep } : { text: firstStep });
    verdicts = [
      JSON.stringify({ verdict: 'not_met_yet', reason: 'only one haiku so far', evidence: 'the reply holds one haiku' }),
      JSON.stringify({ verdict: 'satisfied', reason: 'three haikus written', evidence: 'the replies hold three haikus' }),
    ];
    const set = say(chatId, '/goal write three haikus');
    await finalReply(chatId, set.message_id, `${firstStep}\n\n${secondStep}`);

    expect(chatRequests[0]?.messages.at(-1)).toMatchObject({ role: 'user', content: 'write three haikus' });
    expect(textOf(chatRequests[1]?.messages.at(-1))).toContain(`Evaluator's reason: "only one haiku so far"`);
    expect(await command(chatId, '/goal')).toBe('No active goal.');
  });

  it('keeps a goal the evaluator cannot judge yet, shows it with /goal, and clears it with /goal clear', async () => {
    chat = () => ({ text: 'Which language should I translate it into?' });
    verdicts = [JSON.stringify({ verdict: 'needs_user_input', reason: 'the target language is unknown', evidence: 'the question' })];
    const set = say(chatId, '/goal translate the README');
    await finalReply(chatId, set.message_id, 'Which language should I translate it into?');

    expect(await command(chatId, '/goal')).toBe('Goal: translate the README');
    expect(await command(chatId, '/goal clear')).toBe('Goal cleared.');
    expect(await command(chatId, '/goal')).toBe('No active goal.');
  });

  it('refuses a goal over 4000 characters without running the agent', async () => {
    const objective = 'x'.repeat(4001);
    expect(await command(chatId, `/goal ${objective}`)).toBe('The goal objective must be at most 4000 characters.');
    // A marker turn after it: had the objective run, its request would have come first.
    const marker = say(chatId, 'still there?');
    await finalReply(chatId, marker.message_id, 'Echo: still there?');
    expect(chatRequests.map((r) => lastUserText(r.messages))).toEqual(['still there?']);
    expect(await command(chatId, '/goal')).toBe('No active goal.');
  });

  it('puts a slash skill into the system prompt for that turn only, and answers an unknown one', async () => {
    const skillBody = readFileSync(new URL('../../skills/public/data-analysis/SKILL.md', import.meta.url), 'utf8');
    const heading = skillBody.split('\n').find((line) => line.startsWith('# '));
    expect(heading).toBe('# Data analysis');

    const activated = say(chatId, '/data-analysis summarise the upload');
    await finalReply(chatId, activated.message_id, 'Echo: /data-analysis summarise the upload');
    const skillPrompt = systemPromptOf(chatRequests[0] as FakeChatRequest);
    expect(skillPrompt).toContain('<active_skill name="data-analysis" path="/mnt/skills/public/data-analysis/SKILL.md">');
    expect(skillPrompt).toContain(`${heading}\n`);

    const plain = say(chatId, 'and now without it');
    await finalReply(chatId, plain.message_id, 'Echo: and now without it');
    expect(systemPromptOf(chatRequests[1] as FakeChatRequest)).not.toContain('<active_skill');

    const unknown = say(chatId, '/no-such-skill go');
    await finalReply(chatId, unknown.message_id, `Unknown command: /no-such-skill. ${UNKNOWN_COMMAND_TAIL}`);
    expect(chatRequests).toHaveLength(2);
  });
});

describe('the agent at work, when Telegram allows everyone (no allow-list)', () => {
  beforeAll(() => startAll([]));
  afterAll(stopAll);
  beforeEach(() => {
    chat = echoResponder;
    chatRequests = [];
    verdicts = [];
  });

  it('gives senders the file tools but no shell', async () => {
    const chatId = 8001;
    const question = say(chatId, 'what can you do?');
    await finalReply(chatId, question.message_id, 'Echo: what can you do?');

    const tools = toolNamesOf(chatRequests[0]);
    expect(tools).toContain('write_file');
    expect(tools).not.toContain('bash');
    expect(systemPromptOf(chatRequests[0] as FakeChatRequest)).toContain('Shell commands are not available in this conversation');
  });
});
