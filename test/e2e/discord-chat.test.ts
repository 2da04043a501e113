import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { platforms } from '../../channels/index.js';
import { FakeDiscord, type FakeUser, type StoredMessage } from '../fakes/discord/index.js';
import { FakeOpenAI } from '../fakes/openai/index.js';
import { channelFailedToStart, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * The whole server as a Discord user meets it: `src/main.ts` with a config file, the real
 * discord.js against FakeDiscord (gateway and REST), the real ChatOpenAI against a fake model.
 * Assertions are about what the chat shows. Runs once `discordChannel` is registered in
 * `channels/index.ts`.
 */

const CURSOR = ' ▉';
const isRegistered = platforms.some((platform) => platform.name === 'discord');

let discord: FakeDiscord;
let model: FakeOpenAI;
let server: ServerProcess;
let nextUser = 1;

function newUser(): FakeUser {
  const id = `70000000000000${String(1000 + nextUser++)}`;
  return { id, username: `user${id.slice(-4)}`, global_name: `User ${id.slice(-4)}` };
}

function configYaml(): string {
  return `server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  discord: { enabled: true, bot_token: "${discord.token}", api_url: "${discord.apiRoot}", mention_only: true }
`;
}

/** The bot message in `channelId` whose text became `text`. */
function finalIn(channelId: string, text: string, timeoutMs = 15_000): Promise<StoredMessage> {
  return discord.waitFor(() => discord.botMessages(channelId).find((m) => m.content === text), timeoutMs);
}

describe.skipIf(!isRegistered)('chatting in Discord', () => {
  beforeAll(async () => {
    discord = new FakeDiscord();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    await Promise.all([discord.start(), model.start()]);
    server = await startServerProcess(['--config', writeConfig(configYaml()).path]);
    await discord.waitFor(() => discord.gateway.isConnected, 15_000);
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([discord?.stop(), model?.stop()]);
  });
  afterEach(() => {
    expect(discord.rateLimitViolations).toEqual([]);
  });

  it('answers a DM by growing one reply in place while the model streams, then the final answer', async () => {
    const words = Array.from({ length: 24 }, (_, i) => `word${i} `);
    model.enqueue({ chunks: words, chunkDelayMs: 150 });
    const user = newUser();
    const question = discord.sendUserMessage({ author: user, content: 'Tell me a story' });
    const final = await finalIn(question.channelId, words.join(''));

    expect(final.replyTo).toBe(question.id);
    const partials = final.history.slice(0, -1);
    expect(partials.length).toBeGreaterThanOrEqual(2);
    for (const partial of partials) {
      expect(partial.endsWith(CURSOR)).toBe(true);
      expect(words.join('').startsWith(partial.slice(0, -CURSOR.length))).toBe(true);
    }
    const partialTimes = [final.sentAt, ...final.editedAt].slice(0, partials.length);
    for (let i = 1; i < partialTimes.length; i++) expect(partialTimes[i]! - partialTimes[i - 1]!).toBeGreaterThanOrEqual(1200);
    expect(discord.botMessages(question.channelId)).toHaveLength(1);
    expect(discord.reactions.some((r) => r.messageId === question.id && r.emoji === '👀')).toBe(true);
  });

  it('answers a mention in a server channel in a thread of its own, and continues there without a mention', async () => {
    const user = newUser();
    const general = discord.channelIds.general;
    discord.sendUserMessage({ channelId: general, author: user, content: 'people chatting, not for the bot' });
    const question = discord.sendUserMessage({ channelId: general, author: user, content: `<@${discord.bot.id}> hello bot` });
    await finalIn(question.id, 'Echo: hello bot');
    expect(discord.threads().find((t) => t.id === question.id)?.name).toBe(`deerflow-${user.global_name}-${question.id}`);
    discord.sendUserMessage({ channelId: question.id, author: user, content: 'and more' });
    await finalIn(question.id, 'Echo: and more');
    expect(discord.botMessages(general)).toEqual([]);
    // The model saw one conversation: the first question is in the second request.
    expect(model.requests.at(-1)?.messages.map((m) => m.content)).toContain('hello bot');
  });
});

describe.skipIf(!isRegistered)('a Discord bot token that Discord refuses', () => {
  it('leaves the server up, reporting the Discord channel not running and why', async () => {
    const refusing = new FakeDiscord({ rejectToken: true });
    await refusing.start();
    const yaml = `server: { port: 0 }
channels:
  discord: { enabled: true, bot_token: "${refusing.token}", api_url: "${refusing.apiRoot}" }
`;
    const serverProcess = await startServerProcess(['--config', writeConfig(yaml).path]);
    try {
      await serverProcess.waitForLog(channelFailedToStart('discord'));
      const health = (await (await fetch(`${serverProcess.url}/health`)).json()) as { channels: Record<string, unknown> };
      expect(health.channels.discord).toEqual({ running: false, reason: 'Discord rejected the bot token (401 Unauthorized)' });
      expect(serverProcess.stderr()).not.toContain(refusing.token);
      expect(JSON.stringify(serverProcess.logs)).not.toContain(refusing.token);
    } finally {
      await serverProcess.stop();
      await refusing.stop();
    }
  });
});
