/**
 * Discord end to end: N DMs × M messages through the whole server (its own process, started like
 * `npm start`, with the Discord channel on), against FakeDiscord (gateway + REST) and a fake
 * model streaming with zero delay; then the same load on a bare discord.js bot, in its own
 * process, answering each message with one reply.
 *
 * Latency is measured from the MESSAGE_CREATE dispatch to the REST call (its arrival at the fake)
 * that put the final text on screen: the last edit, or the last message.
 *
 * Run alone: `tsx test/bench/discord.ts [chats] [messages]`. `tsx test/bench/discord.ts
 * --baseline-bot <apiRoot> <token> <answer suffix>` is the baseline bot.
 */
import { fileURLToPath } from 'node:url';
import { Client, Events, GatewayIntentBits, Partials } from 'discord.js';
import { FakeDiscord, type FakeUser } from '../fakes/discord/index.js';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { ANSWER_PAD, answerTo } from './final-watcher.js';
import { printOursVsBare } from './platforms.js';
import { startChatBenchServer, startProcess, stopProcess } from './server-process.js';
import { type LatencySummary, summarize } from './stats.js';
import type { PlatformFigures } from './telegram.js';

export interface DiscordBenchOptions {
  chats: number;
  messagesPerChat: number;
  /** PostgreSQL URL for the server; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
}

const THIS_FILE = fileURLToPath(import.meta.url);

/** Watches the fake's REST calls for the one that shows each expected final text. */
class DiscordFinalWatcher {
  private readonly pending = new Map<string, { sentAt: number; resolve: (latencyMs: number) => void }>();
  private seen = 0;
  private watching: Promise<unknown> | undefined;

  constructor(private readonly discord: FakeDiscord) {}

  /** Resolves with ms from `sentAt` to the send or edit that showed `finalText`. Never rejects. */
  expect(finalText: string, sentAt: number): Promise<number> {
    const done = new Promise<number>((resolve) => this.pending.set(finalText, { sentAt, resolve }));
    this.watching ??= this.discord.waitFor(() => this.scan(), 3_600_000);
    return done;
  }

  private scan(): boolean {
    const calls = this.discord.calls;
    for (; this.seen < calls.length; this.seen++) {
      const call = calls[this.seen];
      if (!call || (call.route !== 'send' && call.route !== 'edit') || call.status !== 200) continue;
      const content = String((call.body as { content?: unknown } | undefined)?.content);
      const entry = this.pending.get(content);
      if (!entry) continue;
      this.pending.delete(content);
      entry.resolve(call.at - entry.sentAt);
    }
    return false;
  }
}

/** Each DM sends its next message when the previous one's final text is on screen. */
async function drive(discord: FakeDiscord, chats: number, perChat: number, firstUser: number): Promise<LatencySummary> {
  const watcher = new DiscordFinalWatcher(discord);
  const latencies: number[] = [];
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      const user: FakeUser = { id: String(800_000_000_000_000_000n + BigInt(firstUser + c)), username: `bench${firstUser + c}` };
      for (let m = 0; m < perChat; m++) {
        const text = `q ${user.id}-${m}`;
        const sentAt = Date.now();
        const final = watcher.expect(answerTo(text), sentAt);
        discord.sendUserMessage({ author: user, content: text });
        latencies.push(await final);
      }
    }),
  );
  return summarize(latencies, Date.now() - startedAt);
}

/** The server, as `npm start` runs it, with only the Discord channel on. */
async function startDiscordServer(discord: FakeDiscord, model: FakeOpenAI, databaseUrl?: string) {
  const server = await startChatBenchServer({
    model,
    databaseUrl,
    channel: `discord: { enabled: true, bot_token: "${discord.token}", api_url: "${discord.apiRoot}" }`,
  });
  await discord.waitFor(() => discord.gateway.isConnected, 30_000);
  return server;
}

export async function runDiscordBench(options: DiscordBenchOptions): Promise<PlatformFigures> {
  const total = options.chats * options.messagesPerChat;
  const database = options.databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  console.log(`\ndiscord on ${database}: ${options.chats} DMs × ${options.messagesPerChat} messages (${total}), fake model streaming with zero delay`);
  const discord = new FakeDiscord();
  const model = new FakeOpenAI();
  await Promise.all([discord.start(), model.start()]);
  model.respond = (request) => ({ text: answerTo(lastUserText(request.messages)) });
  const server = await startDiscordServer(discord, model, options.databaseUrl);
  await drive(discord, Math.min(options.chats, 5), 2, 1_000_000); // warm-up: JIT, connections, first thread
  const oursAlone = await drive(discord, 1, options.messagesPerChat, 500_000);
  const ours = await drive(discord, options.chats, options.messagesPerChat, 1);
  await stopProcess(server);
  await Promise.all([discord.stop(), model.stop()]);

  // The baseline on a fresh fake, so neither run sees the other's recorded calls.
  const baselineDiscord = new FakeDiscord();
  await baselineDiscord.start();
  const bot = await startProcess([THIS_FILE, '--baseline-bot', baselineDiscord.apiRoot, baselineDiscord.token, ANSWER_PAD], (line) => line === 'ready');
  await drive(baselineDiscord, Math.min(options.chats, 5), 2, 1_000_000);
  const bareAlone = await drive(baselineDiscord, 1, options.messagesPerChat, 500_000);
  const bare = await drive(baselineDiscord, options.chats, options.messagesPerChat, 1);
  await stopProcess(bot);
  await baselineDiscord.stop();

  printOursVsBare({
    baseline: 'bare discord.js bot',
    chat: 'DM',
    messagesPerChat: options.messagesPerChat,
    chats: options.chats,
    ours: { alone: oursAlone, concurrent: ours },
    bare: { alone: bareAlone, concurrent: bare },
  });
  return { alone: oursAlone, concurrent: ours };
}

/** The baseline: a bare discord.js bot answering every message with one reply (the same text the fake model writes). */
async function runBaselineBot(apiRoot: string, token: string, suffix: string): Promise<void> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages],
    partials: [Partials.Channel],
    rest: { api: apiRoot },
  });
  client.on(Events.MessageCreate, (message) => {
    if (message.author.bot) return;
    message.reply({ content: `Answer to ${message.content}${suffix}`, allowedMentions: { parse: [] } }).catch(() => undefined);
  });
  process.on('SIGTERM', () => void client.destroy().finally(() => process.exit(0)));
  await new Promise<void>((resolve, reject) => {
    client.once(Events.ClientReady, () => resolve());
    client.login(token).catch(reject);
  });
  process.stdout.write('ready\n');
}

if (process.argv[1] === THIS_FILE) {
  const [flag, ...rest] = process.argv.slice(2);
  if (flag === '--baseline-bot') {
    const [apiRoot = '', token = '', suffix = ''] = rest;
    await runBaselineBot(apiRoot, token, suffix);
  } else {
    await runDiscordBench({ chats: Number(flag ?? 10), messagesPerChat: Number(rest[0] ?? 5) });
    process.exit(0);
  }
}
