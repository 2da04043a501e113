import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeSlack, type SlackMessageView } from '../fakes/slack/index.js';
import { type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The whole server as a Slack user meets it: `src/main.ts` with a config file, the real Bolt in
 * Socket Mode against FakeSlack, the real ChatOpenAI against a fake model. Assertions are about
 * what the workspace shows.
 */

const WORKING = 'Working on it...';
const CURSOR = ' ▉';
const CHANNEL = 'C0TEAM01';

let slack: FakeSlack;
let model: FakeOpenAI;
let server: ServerProcess;
let nextUser = 1;

function configYaml(): string {
  return `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  slack: { enabled: true, bot_token: "${slack.botToken}", app_token: "${slack.appToken}", api_url: "${slack.apiUrl}" }
`;
}

/** The bot's messages in the thread of `ts`. */
function thread(channel: string, ts: string): SlackMessageView[] {
  return slack.botMessages(channel).filter((m) => m.threadTs === ts);
}

async function finalIn(channel: string, ts: string, text: string, timeoutMs = 15_000): Promise<SlackMessageView> {
  return slack.waitFor(() => thread(channel, ts).find((m) => m.text === text && !m.isStreaming), timeoutMs);
}

function freshUser(): { user: string; dm: string } {
  const user = `U0E2E${String(nextUser++).padStart(3, '0')}`;
  return { user, dm: `D${user}` };
}

describe('chatting in Slack', () => {
  beforeAll(async () => {
    slack = new FakeSlack();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([slack.start(), model.start()]);
    server = await startServerProcess(['--config', writeConfig(configYaml()).path]);
    await slack.waitFor(() => slack.openSockets === 1, 15_000);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([slack.stop(), model.stop()]);
  });
  afterEach(() => {
    expect(slack.rateLimitViolations).toEqual([]);
  });

  it('answers a DM in its thread: Working on it... at once, a growing native stream, then the final', async () => {
    const { user, dm } = freshUser();
    const words = Array.from({ length: 24 }, (_, i) => `word${i} `);
    model.enqueue({ chunks: words, chunkDelayMs: 120 });
    const question = await slack.sendUserMessage({ channel: dm, channelType: 'im', user, text: 'Tell me a story' });
    const final = await finalIn(dm, question.ts, words.join(''));

    const placeholder = slack.calls.find((c) => c.method === 'chat.postMessage' && c.params.channel === dm);
    expect(placeholder?.params).toMatchObject({ text: WORKING, thread_ts: question.ts });
    const partials = final.history.slice(0, -1);
    expect(partials.length).toBeGreaterThanOrEqual(2);
    for (const partial of partials) expect(words.join('').startsWith(partial)).toBe(true);
    expect(final.text.endsWith(CURSOR)).toBe(false);
    // The stream replaced the placeholder: one message in the thread.
    expect(thread(dm, question.ts)).toHaveLength(1);
    expect(slack.messages(dm).find((m) => m.ts === question.ts)?.reactions).toContain('eyes');
  });

  it('answers a channel mention in its thread, streaming to the person who asked, and marks the question done', async () => {
    const { user } = freshUser();
    const words = Array.from({ length: 20 }, (_, i) => `part${i} `);
    model.enqueue({ chunks: words, chunkDelayMs: 120 });
    const question = await slack.sendUserMessage({
      channel: CHANNEL,
      channelType: 'channel',
      user,
      text: `<@${slack.botUserId}> summarise please`,
      eventType: 'app_mention',
    });
    const final = await finalIn(CHANNEL, question.ts, words.join(''));
    // In a channel Slack streams to one person: the stream names who asked.
    const start = slack.calls.find((c) => c.method === 'chat.startStream' && c.params.channel === CHANNEL && c.params.thread_ts === question.ts);
    expect(start?.params).toMatchObject({ recipient_user_id: user, recipient_team_id: expect.any(String) });
    expect(final.history.length).toBeGreaterThanOrEqual(2);
    expect(thread(CHANNEL, question.ts)).toHaveLength(1);
    await slack.waitFor(() => slack.messages(CHANNEL).find((m) => m.ts === question.ts)?.reactions.includes('white_check_mark'));
    // The model saw the text without our mention.
    expect(model.requests.at(-1)?.messages.map((m) => m.content)).toContain('summarise please');
    // A reply in the thread continues the same conversation.
    const followUp = await slack.sendUserMessage({ channel: CHANNEL, channelType: 'channel', user, text: `<@${slack.botUserId}> and then?`, eventType: 'app_mention', threadTs: question.ts });
    await finalIn(CHANNEL, question.ts, 'Echo: and then?');
    expect(model.requests.at(-1)?.messages.map((m) => m.content)).toContain('summarise please');
    expect(followUp.ts).not.toBe(question.ts);
  });

  it('edits the placeholder in DMs once the workspace refuses native streaming', async () => {
    slack.streamingError = 'not_allowed';
    const { user, dm } = freshUser();
    const words = Array.from({ length: 16 }, (_, i) => `bit${i} `);
    model.enqueue({ chunks: words, chunkDelayMs: 150 });
    const question = await slack.sendUserMessage({ channel: dm, channelType: 'im', user, text: 'go on' });
    const final = await finalIn(dm, question.ts, words.join(''));
    expect(final.history[0]).toBe(WORKING);
    expect(final.history.length).toBeGreaterThanOrEqual(3);
    expect(thread(dm, question.ts)).toHaveLength(1);
  });

  it("gives the model exactly what the person typed, and shows its echo exactly (issue #20's example)", async () => {
    const { user, dm } = freshUser();
    const typed = 'compare 1 < 2 && 3 > 2';
    const echoes = model.respond;
    model.respond = (request) => ({ text: lastUserText(request.messages) });
    try {
      const question = await slack.sendUserMessage({ channel: dm, channelType: 'im', user, text: typed });
      // Slack's client sent it encoded; the model must not see that.
      expect(slack.messages(dm).find((m) => m.ts === question.ts)?.text).toBe('compare 1 &lt; 2 &amp;&amp; 3 &gt; 2');
      const final = await slack.waitFor(() => thread(dm, question.ts).find((m) => m.shown === typed && !m.isStreaming), 15_000);
      expect(final.shown).toBe(typed);
      const asked = model.requests.findLast((request) => lastUserText(request.messages).includes('compare'));
      expect(asked && lastUserText(asked.messages)).toBe(typed);
    } finally {
      model.respond = echoes;
    }
  });
});

describe('Slack HTTP events through the real server', () => {
  let httpSlack: FakeSlack;
  let httpModel: FakeOpenAI;
  let httpServer: ServerProcess;

  beforeAll(async () => {
    httpSlack = new FakeSlack();
    httpModel = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([httpSlack.start(), httpModel.start()]);
    const yaml = `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${httpModel.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  slack: { enabled: true, bot_token: "${httpSlack.botToken}", signing_secret: "${httpSlack.signingSecret}", api_url: "${httpSlack.apiUrl}" }
`;
    httpServer = await startServerProcess(['--config', writeConfig(yaml).path]);
    httpSlack.eventsUrl = `${httpServer.url}/api/webhooks/slack`;
  });
  afterAll(async () => {
    await httpServer?.stop();
    await Promise.all([httpSlack?.stop(), httpModel?.stop()]);
  });

  it('verifies the URL, refuses unsigned events, and answers a signed DM in its thread', async () => {
    const challenge = await httpSlack.postEvent({ type: 'url_verification', challenge: 'chal-e2e', token: 'x' }, 0);
    expect([challenge.status, JSON.parse(challenge.body)]).toEqual([200, { challenge: 'chal-e2e' }]);
    const unsigned = await httpSlack.postEvent({ type: 'event_callback', event_id: 'EvX', event: {} }, 0, { signature: null });
    expect(unsigned.status).toBe(401);

    const question = await httpSlack.sendUserMessage({ channel: 'DU0HTTP01', channelType: 'im', user: 'U0HTTP01', text: 'over http' });
    expect(httpSlack.eventResponses.at(-1)?.status).toBe(200);
    const final = await httpSlack.waitFor(
      () => httpSlack.botMessages('DU0HTTP01').find((m) => m.threadTs === question.ts && m.text === 'Echo: over http' && !m.isStreaming),
      15_000,
    );
    expect(final).toBeDefined();
  });
});
