import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platforms } from '../../channels/index.js';
import { FakeDingTalk } from '../fakes/dingtalk/index.js';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The whole server as a DingTalk user meets it: `src/main.ts` with a config file, the real
 * `dingtalk-stream` client in Stream mode against FakeDingTalk, the real ChatOpenAI against a fake
 * model. Assertions are about what the conversation shows. Runs once DingTalk is registered in
 * `channels/index.ts`.
 */

const WORKING = '⏳ Working on it...';
const isRegistered = platforms.some((p) => p.name === 'dingtalk');

async function bootServer(dingtalk: FakeDingTalk, model: FakeOpenAI, cardTemplateId: string): Promise<ServerProcess> {
  const yaml = `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  dingtalk: { enabled: true, client_id: "${dingtalk.clientId}", client_secret: "${dingtalk.clientSecret}", api_url: "${dingtalk.apiUrl}", card_template_id: "${cardTemplateId}" }
`;
  const server = await startServerProcess(['--config', writeConfig(yaml).path]);
  await dingtalk.waitFor(() => dingtalk.connectionsOpened === 1, 15_000);
  return server;
}

/** A fresh fake DingTalk, fake model and server for the enclosing `describe`, with `cardTemplateId`. */
function useServer(cardTemplateId: string): { dingtalk: FakeDingTalk; model: FakeOpenAI } {
  const running = {} as { dingtalk: FakeDingTalk; model: FakeOpenAI };
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    running.dingtalk = new FakeDingTalk();
    running.model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([running.dingtalk.start(), running.model.start()]);
    server = await bootServer(running.dingtalk, running.model, cardTemplateId);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([running.dingtalk?.stop(), running.model?.stop()]);
  });
  return running;
}

describe.skipIf(!isRegistered)('chatting in DingTalk with an AI card template', () => {
  const running = useServer('e2e-template.schema');

  it('answers a P2P message in one AI card: created at once, streamed no faster than 800 ms, finalized', async () => {
    const words = Array.from({ length: 24 }, (_, i) => `word${i} `);
    running.model.enqueue({ chunks: words, chunkDelayMs: 150 });
    const question = await running.dingtalk.sendUserMessage({ chat: 'private', userId: 'staffe2e01', text: 'Tell me a story' });
    const card = await running.dingtalk.waitFor(() => running.dingtalk.botMessages('staffe2e01').find((m) => m.kind === 'card' && m.isFinalized), 20_000);
    expect(running.dingtalk.isAcked(question.streamMessageId)).toBe(true);
    expect(card.history[0]).toBe(WORKING);
    expect(card.text).toBe(words.join(''));
    expect(card.history.length).toBeGreaterThanOrEqual(3);
    const streamed = running.dingtalk.calls.filter((c) => c.path === '/v1.0/card/streaming' && c.body.outTrackId === card.id);
    const partials = streamed.filter((c) => c.body.isFinalize !== true);
    const gaps = partials.slice(1).map((c, i) => c.at - (partials[i]?.at ?? 0));
    expect(gaps.filter((gap) => gap < 800)).toEqual([]);
    expect(streamed.at(-1)?.body).toMatchObject({ isFinalize: true, content: words.join('') });
    expect(running.dingtalk.botMessages('staffe2e01')).toHaveLength(1);
  });
});

describe.skipIf(!isRegistered)('chatting in DingTalk without a card template', () => {
  const running = useServer('');

  it('answers a group mention with the working text, then the final as markdown; quoting it continues the conversation, a new message starts another', async () => {
    const question = await running.dingtalk.sendUserMessage({ chat: 'group', userId: 'staffe2e02', text: 'what is `ls`?' });
    await running.dingtalk.waitFor(() => running.dingtalk.botMessages(question.chatId).find((m) => m.kind === 'markdown'), 20_000);
    const [ack, final] = running.dingtalk.botMessages(question.chatId);
    expect(ack).toMatchObject({ kind: 'text', text: WORKING, replyTo: question.msgId });
    // The echo's inline code became bold for sampleMarkdown.
    expect(final).toMatchObject({ kind: 'markdown', text: 'Echo: what is **ls**?', replyTo: question.msgId });
    // Another member quoting the question continues its conversation: the model sees it.
    await running.dingtalk.sendUserMessage({ chat: 'group', userId: 'staffe2e03', text: 'and then?', quotedMessageId: question.msgId });
    await running.dingtalk.waitFor(() => running.dingtalk.botMessages(question.chatId).find((m) => m.text === 'Echo: and then?'), 20_000);
    expect(running.model.requests.at(-1)?.messages.map((m) => m.content)).toContain('what is `ls`?');
    // A message that quotes nothing starts its own (reference §3.3): members never wait for each other.
    await running.dingtalk.sendUserMessage({ chat: 'group', userId: 'staffe2e03', text: 'unrelated' });
    await running.dingtalk.waitFor(() => running.dingtalk.botMessages(question.chatId).find((m) => m.text === 'Echo: unrelated'), 20_000);
    expect(running.model.requests.at(-1)?.messages.map((m) => m.content)).not.toContain('what is `ls`?');
  });

  it('replies through the robot API after the session webhook expired', async () => {
    const question = await running.dingtalk.sendUserMessage({ chat: 'private', userId: 'staffe2e04', text: 'late reply please' });
    await running.dingtalk.waitFor(() => running.dingtalk.botMessages('staffe2e04').find((m) => m.text === WORKING), 20_000);
    running.dingtalk.expireSessionWebhooks();
    const final = await running.dingtalk.waitFor(() => running.dingtalk.botMessages('staffe2e04').find((m) => m.kind === 'markdown'), 20_000);
    expect(final).toMatchObject({ via: 'robot', text: 'Echo: late reply please' });
    expect(running.dingtalk.isAcked(question.streamMessageId)).toBe(true);
  });
});
