import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { platforms } from '../../channels/index.js';
import { FakeFeishu, type FeishuMessageView } from '../fakes/feishu/index.js';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The whole server as a Feishu user meets it: `src/main.ts` with a config file, the real Lark SDK
 * (long connection + open API) against FakeFeishu, the real ChatOpenAI against a fake model.
 * Skipped until `feishuChannel` is registered in `channels/index.ts`.
 */

const isRegistered = platforms.some((platform) => platform.name === 'feishu');
const GROUP = 'oc_group_e2e0000000000000000000001';

let feishu: FakeFeishu;
let model: FakeOpenAI;
let server: ServerProcess;
let nextUser = 1;

function freshUser(): { openId: string; chatId: string } {
  const openId = `ou_e2e${String(nextUser++).padStart(26, '0')}`;
  return { openId, chatId: `oc_p2p_${openId}` };
}

/** The bot's card answering `messageId`, once it shows `text`. */
function finalIn(chatId: string, messageId: string, text: string, timeoutMs = 15_000): Promise<FeishuMessageView> {
  return feishu.waitFor(() => feishu.botMessages(chatId).find((m) => m.replyTo === messageId && m.text === text), timeoutMs);
}

describe.skipIf(!isRegistered)('chatting in Feishu', () => {
  beforeAll(async () => {
    feishu = new FakeFeishu();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([feishu.start(), model.start()]);
    const yaml = `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  feishu: { enabled: true, app_id: "${feishu.appId}", app_secret: "${feishu.appSecret}", domain: "${feishu.url}" }
`;
    server = await startServerProcess(['--config', writeConfig(yaml).path]);
    await feishu.waitFor(() => feishu.connectionCount() === 1, 15_000);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([feishu?.stop(), model?.stop()]);
  });
  afterEach(() => {
    expect(feishu.rateLimitViolations).toEqual([]);
  });

  it('answers a p2p message in one card: OK reaction, running card, streamed partials, final, DONE', async () => {
    const { openId, chatId } = freshUser();
    const words = Array.from({ length: 24 }, (_, i) => `word${i} `);
    model.enqueue({ chunks: words, chunkDelayMs: 120 });
    const question = feishu.sendUserMessage({ chatId, chatType: 'p2p', openId, text: 'Tell me a story' });
    const final = await finalIn(chatId, question.messageId, words.join(''));
    expect(final.msgType).toBe('interactive');
    expect(final.history.length).toBeGreaterThanOrEqual(3);
    expect(feishu.botMessages(chatId)).toHaveLength(1);
    // A CardKit card, never more than 10 operations a second on it.
    expect(feishu.cards.size).toBeGreaterThan(0);
    expect(feishu.cardRateViolations).toEqual([]);
    expect(feishu.appRateViolations).toEqual([]);
    await feishu.waitFor(() => feishu.reactions.filter((r) => r.messageId === question.messageId).length === 2);
    expect(feishu.reactions.filter((r) => r.messageId === question.messageId).map((r) => r.emoji)).toEqual(['OK', 'DONE']);
    expect(feishu.events.every((e) => e.acked && e.pushes === 1)).toBe(true);
  });

  it('answers a group mention in its topic, and a reply to the card continues the conversation', async () => {
    const { openId } = freshUser();
    model.enqueue({ chunks: ['The ', 'summary.'], chunkDelayMs: 50 });
    const question = feishu.sendUserMessage({ chatId: GROUP, chatType: 'group', openId, text: 'summarise please', mentionsBot: true });
    const card = await finalIn(GROUP, question.messageId, 'The summary.');
    expect(model.requests.at(-1)?.messages.map((m) => m.content)).toContain('summarise please');
    const followUp = feishu.sendUserMessage({ chatId: GROUP, chatType: 'group', openId, text: 'and then?', mentionsBot: true, parentId: card.messageId });
    // The answer inside the topic quotes the message it answers.
    await finalIn(GROUP, followUp.messageId, '> and then?\n\nEcho: and then?');
    // Same conversation: the model saw the first question again.
    expect(model.requests.at(-1)?.messages.map((m) => m.content)).toContain('summarise please');
  });

  it('answers pictures sent together once, with every picture uploaded for the model', async () => {
    const { openId, chatId } = freshUser();
    const keys = ['img_v3_e2e_first_picture', 'img_v3_e2e_other_picture'];
    for (const key of keys) feishu.resources.set(key, Buffer.from(`picture ${key}`));
    const requestsBefore = model.requests.length;
    const [first, second] = keys.map((key) => feishu.sendUserMessage({ chatId, chatType: 'p2p', openId, messageType: 'image', content: JSON.stringify({ image_key: key }) }));
    await feishu.waitFor(() => feishu.reactions.filter((r) => r.messageId === second?.messageId && r.emoji === 'DONE').length === 1, 15_000);
    expect(feishu.botMessages(chatId).map((m) => m.replyTo)).toEqual([first?.messageId]);
    const requests = model.requests.slice(requestsBefore).filter((r) => JSON.stringify(r.messages).includes('feishu_'));
    expect(requests).toHaveLength(1);
    const systemPrompt = String(requests[0]?.messages[0]?.content);
    for (const key of keys) expect(systemPrompt).toContain(`/mnt/user-data/uploads/feishu_${key.slice(-12)}.png`);
  });

  it("takes a plain group message as the answer to the agent's question, in the same conversation", async () => {
    const { openId } = freshUser();
    const question = 'Which environment should I deploy to?';
    model.enqueue({ toolCalls: [{ name: 'ask_clarification', args: { question, clarification_type: 'missing_info' } }] }, { text: 'Deploying to staging.' });
    const ask = feishu.sendUserMessage({ chatId: GROUP, chatType: 'group', openId, text: 'deploy the app', mentionsBot: true });
    await feishu.waitFor(() => feishu.botMessages(GROUP).find((m) => m.replyTo === ask.messageId && m.text.startsWith(question)), 15_000);
    // The person answers once the reply is complete (DONE); the question is remembered before that.
    await feishu.waitFor(() => feishu.reactions.some((r) => r.messageId === ask.messageId && r.emoji === 'DONE'));
    // Not a reply to the card: a new top-level message, which would otherwise start a new conversation.
    const answer = feishu.sendUserMessage({ chatId: GROUP, chatType: 'group', openId, text: 'staging', mentionsBot: true });
    await finalIn(GROUP, answer.messageId, 'Deploying to staging.');
    const contents = model.requests.at(-1)?.messages.map((m) => m.content) ?? [];
    expect(contents).toContain('deploy the app');
    expect(contents.at(-1)).toBe('staging');
  });
});
