import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoResponder, FakeOpenAI, type FakeReply, lastUserText } from '../fakes/openai/index.js';
import { apiClient } from './api-client.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';
import { agentFinals, type WebFrame, webChat } from './web-chat-client.js';

/**
 * The web chat through the real server, as a page uses it: a person's message, the reply growing
 * while the model streams and then its final, commands, files both ways, and the walls between
 * accounts. The server requires keys (an operator token), so every caller is someone.
 */

const ADMIN_TOKEN = 'web-chat-operator-token-0123456789';
const WORKING = 'Working on it...';

let model: FakeOpenAI;
let server: ServerProcess | undefined;
const url = () => server?.url ?? '';
const api = apiClient(url);
let ana: ReturnType<typeof webChat>;
let ben: ReturnType<typeof webChat>;

/** The texts a reply showed on the page, in order: its acknowledgement, each partial, its final. */
function replyTexts(frames: WebFrame[], replyId: number): string[] {
  return frames.flatMap((f) => {
    if (f.event === 'message' && f.data.id === replyId) return [f.data.text as string];
    if (f.event === 'partial' && f.data.message_id === replyId) return [f.data.text as string];
    return [];
  });
}

async function createUser(name: string): Promise<string> {
  const created = await api('POST', '/api/users', ADMIN_TOKEN, { name });
  expect(created.status).toBe(201);
  return created.body?.api_key as string;
}

describe('the web chat', () => {
  beforeAll(async () => {
    model = new FakeOpenAI({ apiKey: 'sk-web' });
    await model.start();
    server = await startServerProcess([
      '--config',
      writeConfig(`server: { port: 0 }
auth: { admin_token: ${ADMIN_TOKEN} }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-web, max_retries: 0 }
memory: { enabled: false }
`).path,
    ]);
    ana = webChat(url, await createUser('ana'));
    ben = webChat(url, await createUser('ben'));
  });

  afterAll(async () => {
    await server?.stop();
    await model?.stop();
  });

  it('shows the message, Working on it..., the reply growing while the model streams, then the final', async () => {
    model.respond = (): FakeReply => ({ chunks: ['The ', 'answer ', 'grows ', 'word ', 'by ', 'word.'], chunkDelayMs: 120 });
    const conversation = await ana.newConversation('first');
    const page = await ana.events(conversation);
    expect(page.status).toBe(200);
    const sent = await ana.send(conversation, 'compare 1 < 2 && 3 > 2');
    expect(sent).toEqual({ status: 202, body: { outcome: 'accepted' } });

    const final = await page.waitFor((frames) => agentFinals(frames)[0]);
    page.close();
    expect(final).toBe('The answer grows word by word.');
    const person = page.frames.find((f) => f.event === 'message' && f.data.author === 'person');
    expect(person?.data.text).toBe('compare 1 < 2 && 3 > 2');
    const replyId = page.frames.find((f) => f.event === 'message' && f.data.author === 'agent')?.data.id as number;
    const shown = replyTexts(page.frames, replyId);
    expect(shown[0]).toBe(WORKING);
    expect(shown.at(-1)).toBe(final);
    const partials = shown.slice(1, -1);
    expect(partials.length).toBeGreaterThanOrEqual(2);
    // Each partial is a beginning of the answer, longer than the one before.
    for (const [i, partial] of partials.entries()) {
      expect(final.startsWith(partial.replace(/ ▉$/, ''))).toBe(true);
      if (i > 0) expect(partial.length).toBeGreaterThan((partials[i - 1] as string).length);
    }
    // The model read what the person typed, character for character.
    expect(lastUserText(model.requests.at(-1)?.messages ?? [])).toContain('compare 1 < 2 && 3 > 2');

    // A reload shows the same conversation, from the server.
    const transcript = await ana.call('GET', `/conversations/${conversation}/messages`);
    expect(transcript.body.messages.map((m: { author: string; text: string; is_final: boolean }) => [m.author, m.text, m.is_final])).toEqual([
      ['person', 'compare 1 < 2 && 3 > 2', true],
      ['agent', final, true],
    ]);
  });

  it('answers commands as every chat does', async () => {
    model.respond = echoResponder;
    const conversation = await ana.newConversation();
    const page = await ana.events(conversation);
    await ana.send(conversation, '/help');
    const help = await page.waitFor((frames) => agentFinals(frames)[0]);
    await ana.send(conversation, '/status');
    const status = await page.waitFor((frames) => agentFinals(frames)[1]);
    page.close();
    expect(help).toContain('/new');
    expect(help).toContain('/goal');
    expect(status).not.toBe(WORKING);
    expect(status.length).toBeGreaterThan(0);
  });

  it('reads a file the person uploads, and sends back a file the agent wrote', async () => {
    const conversation = await ana.newConversation();
    const uploaded = await ana.upload(conversation, 'notes.txt', 'text/plain', Buffer.from('alpha\nbeta\n'));
    expect(uploaded.status).toBe(201);
    const outputs = '/mnt/user-data/outputs/summary.txt';
    model.respond = (request): FakeReply => {
      const toolResults = request.messages.filter((m) => m.role === 'tool');
      if (toolResults.length === 0) {
        return {
          toolCalls: [
            { name: 'write_file', args: { description: 'summary', path: outputs, content: 'two lines' } },
            { name: 'present_files', args: { filepaths: [outputs] } },
          ],
        };
      }
      return { text: 'Summary written.' };
    };
    const page = await ana.events(conversation);
    expect((await ana.send(conversation, 'summarise the file', { fileIds: [uploaded.body.file.id] })).status).toBe(202);
    const fileMessage = await page.waitFor((frames) => frames.find((f) => f.event === 'message' && f.data.author === 'agent' && f.data.files.length > 0));
    page.close();
    // The model was told of the upload by name.
    const asked = JSON.stringify(model.requests.find((r) => JSON.stringify(r.messages).includes('summarise the file'))?.messages);
    expect(asked).toContain('notes.txt');
    const file = fileMessage.data.files[0];
    expect(file.name).toBe('summary.txt');
    const downloaded = await ana.download(conversation, file.id);
    expect(downloaded.status).toBe(200);
    expect(downloaded.bytes.toString('utf8')).toBe('two lines');
    // Not an image: a download, never rendered on the server's origin.
    expect(downloaded.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(downloaded.headers.get('content-type')).toBe('application/octet-stream');
    expect(agentFinals(page.frames)[0]).toContain('Summary written.');
  });

  it('runs a message sent twice (the same page id) once', async () => {
    model.respond = echoResponder;
    const conversation = await ana.newConversation();
    const clientMessageId = crypto.randomUUID();
    const [first, second] = await Promise.all([
      ana.send(conversation, 'only once', { clientMessageId }),
      ana.send(conversation, 'only once', { clientMessageId }),
    ]);
    expect([first.body.outcome, second.body.outcome].sort()).toEqual(['accepted', 'duplicate']);
    const page = await ana.events(conversation);
    await page.waitFor((frames) => agentFinals(frames)[0]);
    page.close();
    const transcript = await ana.call('GET', `/conversations/${conversation}/messages`);
    expect(transcript.body.messages.map((m: { text: string }) => m.text)).toEqual(['only once', 'Echo: only once']);
  });

  it("keeps each person's conversations their own: another's is not found, the operator is not a person, no key is refused", async () => {
    const conversation = await ana.newConversation('private');
    const uploaded = await ana.upload(conversation, 'secret.txt', 'text/plain', Buffer.from('secret'));
    const fileId = uploaded.body.file.id as string;

    expect((await ben.call('GET', '/conversations')).body.conversations.map((c: { id: string }) => c.id)).not.toContain(conversation);
    expect((await ben.call('GET', `/conversations/${conversation}/messages`)).status).toBe(404);
    expect((await ben.send(conversation, 'hello')).status).toBe(404);
    expect((await ben.events(conversation)).status).toBe(404);
    expect((await ben.download(conversation, fileId)).status).toBe(404);
    expect((await ben.call('DELETE', `/conversations/${conversation}`)).status).toBe(404);
    // Ben's own conversation cannot carry Ana's file either.
    const bens = await ben.newConversation();
    expect((await ben.send(bens, 'read this', { fileIds: [fileId] })).status).toBe(404);

    const operator = webChat(url, ADMIN_TOKEN);
    expect((await operator.call('GET', '/conversations')).status).toBe(403);
    const nobody = webChat(url, undefined);
    expect((await nobody.call('GET', '/conversations')).status).toBe(401);
    expect((await nobody.call('POST', '/conversations', {})).status).toBe(401);
    // Ana still has it all.
    expect((await ana.download(conversation, fileId)).bytes.toString()).toBe('secret');
  });

  it('refuses bad input with a clear error and changes nothing', async () => {
    const conversation = await ana.newConversation();
    const bad = [
      await ana.call('POST', `/conversations/${conversation}/messages`, { text: '   ', client_message_id: crypto.randomUUID() }),
      await ana.call('POST', `/conversations/${conversation}/messages`, { text: 'hi', client_message_id: 'not-a-uuid' }),
      await ana.call('POST', `/conversations/${conversation}/messages`, { text: 'x'.repeat(100_001), client_message_id: crypto.randomUUID() }),
      await ana.call('POST', `/conversations/${conversation}/messages`, { text: 'hi', client_message_id: crypto.randomUUID(), extra: 1 }),
      await ana.call('POST', '/conversations/not-a-uuid/messages', { text: 'hi', client_message_id: crypto.randomUUID() }),
    ];
    expect(bad.map((answer) => answer.status)).toEqual([400, 400, 400, 400, 400]);
    for (const answer of bad) expect(answer.body.message).toEqual(expect.any(String));
    expect((await ana.send(crypto.randomUUID(), 'to nowhere')).status).toBe(404);
    expect((await ana.call('GET', `/conversations/${conversation}/messages`)).body.messages).toEqual([]);
  });
});
