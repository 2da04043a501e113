import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platforms } from '../../channels/index.js';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { FakeWeCom } from '../fakes/wecom/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The whole server as a WeCom member meets it: `src/main.ts` with a config file, the official
 * `@wecom/aibot-node-sdk` client on its long connection to FakeWeCom, the real ChatOpenAI against
 * a fake model. Assertions are about what the conversation shows.
 */

const WORKING = 'Working on it...';
const isRegistered = platforms.some((p) => p.name === 'wecom');

describe.skipIf(!isRegistered)('chatting in WeCom', () => {
  let wecom: FakeWeCom;
  let model: FakeOpenAI;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    wecom = new FakeWeCom();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([wecom.start(), model.start()]);
    const yaml = `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  wecom: { enabled: true, bot_id: "${wecom.botId}", bot_secret: "${wecom.secret}", ws_url: "${wecom.wsUrl}" }
`;
    server = await startServerProcess(['--config', writeConfig(yaml).path]);
    await wecom.waitFor(() => wecom.isAuthenticated(), 15_000);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([wecom?.stop(), model?.stop()]);
  });

  it('answers a single-chat message in one stream: opened with the working text, updated no faster than a second, finished with the answer', async () => {
    const words = Array.from({ length: 24 }, (_, i) => `word${i} `);
    model.enqueue({ chunks: words, chunkDelayMs: 150 });
    const question = await wecom.sendUserMessage({ chat: 'private', userId: 'e2e.alice', text: 'Tell me a story' });
    const stream = await wecom.waitFor(() => wecom.botMessages('e2e.alice').find((m) => m.kind === 'stream' && m.isFinished), 20_000);
    expect(stream).toMatchObject({ replyTo: question.msgid, text: words.join('') });
    expect(stream.history[0]).toBe(WORKING);
    expect(stream.history.length).toBeGreaterThanOrEqual(3);
    const frames = wecom.framesOf('aibot_respond_msg').filter((f) => (f.body.stream as { id?: string } | undefined)?.id === stream.id);
    const partials = frames.filter((f) => (f.body.stream as { finish?: boolean }).finish !== true);
    const gaps = partials.slice(1).map((f, i) => f.at - (partials[i]?.at ?? 0));
    expect(gaps.filter((gap) => gap < 1000)).toEqual([]);
    expect(wecom.botMessages('e2e.alice')).toHaveLength(1);
  });

  it('answers a group mention in the group, and one conversation per group: the model sees the earlier question', async () => {
    const first = await wecom.sendUserMessage({ chat: 'group', chatId: 'wrE2E', userId: 'e2e.bob', text: '@DeerFlow what is `ls`?' });
    await wecom.waitFor(() => wecom.botMessages('wrE2E').find((m) => m.isFinished && m.replyTo === first.msgid && m.text.startsWith('Echo:')), 20_000);
    const second = await wecom.sendUserMessage({ chat: 'group', chatId: 'wrE2E', userId: 'e2e.carol', text: '@DeerFlow and then?' });
    const answer = await wecom.waitFor(() => wecom.botMessages('wrE2E').find((m) => m.isFinished && m.replyTo === second.msgid && m.text.startsWith('Echo:')), 20_000);
    expect(answer.text).toBe('Echo: @DeerFlow and then?');
    expect(model.requests.at(-1)?.messages.map((m) => m.content)).toContain('@DeerFlow what is `ls`?');
    expect(wecom.botMessages('e2e.bob')).toEqual([]);
  });

  it('a message WeCom calls back twice runs once; after a dropped connection the SDK reconnects and nothing is lost or doubled', async () => {
    const question = await wecom.sendUserMessage({ chat: 'private', userId: 'e2e.dave', text: 'only once' });
    await wecom.redeliver(question.msgid);
    await wecom.waitFor(() => wecom.botMessages('e2e.dave').find((m) => m.isFinished && m.text === 'Echo: only once'), 20_000);
    const opened = wecom.connectionsOpened;
    wecom.dropConnections();
    const afterDrop = await wecom.sendUserMessage({ chat: 'private', userId: 'e2e.dave', text: 'after the drop' });
    await wecom.waitFor(() => wecom.botMessages('e2e.dave').find((m) => m.isFinished && m.text === 'Echo: after the drop'), 20_000);
    expect(wecom.connectionsOpened).toBe(opened + 1);
    expect(wecom.botMessages('e2e.dave').map((m) => [m.replyTo, m.text])).toEqual([
      [question.msgid, 'Echo: only once'],
      [afterDrop.msgid, 'Echo: after the drop'],
    ]);
    expect(model.requests.filter((r) => r.messages.at(-1)?.content === 'only once')).toHaveLength(1);
  });
});
