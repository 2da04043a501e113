/**
 * Slack end to end: N DMs × M messages through the whole server (its own process, started like
 * `npm start`, Socket Mode against the fake Slack), with the fake model streaming at zero delay;
 * then the same load on a bare Bolt app answering each message with one chat.postMessage on the
 * same fake. `--baseline` runs that app.
 */
import { fileURLToPath } from 'node:url';
import { App, LogLevel } from '@slack/bolt';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeSlack } from '../fakes/slack/index.js';
import { ANSWER_PAD, answerTo } from './final-watcher.js';
import { printOursVsBare } from './platforms.js';
import { startChatBenchServer, startProcess, stopProcess } from './server-process.js';
import { type LatencySummary, summarize } from './stats.js';
import type { PlatformFigures } from './telegram.js';

export interface SlackBenchOptions {
  chats: number;
  messagesPerChat: number;
  /** PostgreSQL URL for the server; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
}

const THIS_FILE = fileURLToPath(import.meta.url);
/** Calls that can put a final text on screen. */
const SHOWING_METHODS = new Set(['chat.postMessage', 'chat.update']);

/** Resolves each expected final text with its latency, reading only FakeSlack calls it has not seen. */
class SlackFinalWatcher {
  private readonly pending = new Map<string, { sentAt: number; resolve: (latencyMs: number) => void }>();
  private seen = 0;
  private watching: Promise<unknown> | undefined;

  constructor(private readonly slack: FakeSlack) {}

  expect(finalText: string, sentAt: number): Promise<number> {
    const done = new Promise<number>((resolve) => this.pending.set(finalText, { sentAt, resolve }));
    this.watching ??= this.slack.waitFor(() => this.scan(), 3_600_000);
    return done;
  }

  private scan(): boolean {
    const calls = this.slack.calls;
    for (; this.seen < calls.length; this.seen++) {
      const call = calls[this.seen];
      if (!call || !SHOWING_METHODS.has(call.method) || call.response?.ok !== true) continue;
      const entry = this.pending.get(String(call.params.text));
      if (!entry) continue;
      this.pending.delete(String(call.params.text));
      entry.resolve(call.at - entry.sentAt);
    }
    return false;
  }
}

/** Each DM sends its next message when the previous one's final text is on screen. */
async function drive(slack: FakeSlack, chats: number, perChat: number, firstUser: number): Promise<LatencySummary> {
  const watcher = new SlackFinalWatcher(slack);
  const latencies: number[] = [];
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      const user = `U${firstUser + c}`;
      for (let m = 0; m < perChat; m++) {
        const text = `q ${user}-${m}`;
        const sentAt = Date.now();
        const final = watcher.expect(answerTo(text), sentAt);
        await slack.sendUserMessage({ channel: `D${user}`, channelType: 'im', user, text });
        latencies.push(await final);
      }
    }),
  );
  return summarize(latencies, Date.now() - startedAt);
}

async function startSlackServer(slack: FakeSlack, model: FakeOpenAI, databaseUrl: string | undefined) {
  const server = await startChatBenchServer({
    model,
    databaseUrl,
    channel: `slack: { enabled: true, bot_token: "${slack.botToken}", app_token: "${slack.appToken}", api_url: "${slack.apiUrl}" }`,
  });
  await slack.waitFor(() => slack.openSockets > 0, 30_000);
  return server;
}

/** Runs the Slack benchmark and prints ours vs the bare Bolt app; `index.ts` wires it in. */
export async function runSlackBench(options: SlackBenchOptions): Promise<PlatformFigures> {
  const total = options.chats * options.messagesPerChat;
  const database = options.databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  console.log(`\nslack on ${database}: ${options.chats} DMs × ${options.messagesPerChat} messages (${total}), fake model streaming with zero delay`);

  const slack = new FakeSlack();
  const model = new FakeOpenAI();
  await Promise.all([slack.start(), model.start()]);
  model.respond = (request) => ({ text: answerTo(lastUserText(request.messages)) });
  const server = await startSlackServer(slack, model, options.databaseUrl);
  await drive(slack, Math.min(options.chats, 5), 2, 1_000_000);
  const oursAlone = await drive(slack, 1, options.messagesPerChat, 500_000);
  const ours = await drive(slack, options.chats, options.messagesPerChat, 1);
  await stopProcess(server);

  const baselineSlack = new FakeSlack();
  await baselineSlack.start();
  const bot = await startProcess(
    [THIS_FILE, '--baseline', baselineSlack.apiUrl, baselineSlack.botToken, baselineSlack.appToken, ANSWER_PAD],
    (line) => line === 'ready',
  );
  await drive(baselineSlack, Math.min(options.chats, 5), 2, 1_000_000);
  const bareAlone = await drive(baselineSlack, 1, options.messagesPerChat, 500_000);
  const bare = await drive(baselineSlack, options.chats, options.messagesPerChat, 1);
  await stopProcess(bot);

  printOursVsBare({
    baseline: 'bare Bolt app',
    chat: 'DM',
    messagesPerChat: options.messagesPerChat,
    chats: options.chats,
    ours: { alone: oursAlone, concurrent: ours },
    bare: { alone: bareAlone, concurrent: bare },
  });

  await Promise.all([slack.stop(), baselineSlack.stop(), model.stop()]);
  return { alone: oursAlone, concurrent: ours };
}

/** The baseline: a bare Bolt app in Socket Mode answering every message with one chat.postMessage in its thread. */
async function runBaselineBot(apiUrl: string, botToken: string, appToken: string, suffix: string): Promise<void> {
  const app = new App({
    token: botToken,
    appToken,
    socketMode: true,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: apiUrl, retryConfig: { retries: 2 } },
  });
  app.message(async ({ message, client }) => {
    if (!('text' in message) || message.subtype !== undefined) return;
    await client.chat.postMessage({ channel: message.channel, thread_ts: message.ts, text: `Answer to ${message.text}${suffix}` });
  });
  process.on('SIGTERM', () => void app.stop().finally(() => process.exit(0)));
  await app.start();
  process.stdout.write('ready\n');
}

if (process.argv[1] === THIS_FILE && process.argv[2] === '--baseline') {
  const [apiUrl, botToken, appToken, suffix = ''] = process.argv.slice(3);
  if (!apiUrl || !botToken || !appToken) throw new Error('usage: slack.ts --baseline <apiUrl> <botToken> <appToken> <answer suffix>');
  await runBaselineBot(apiUrl, botToken, appToken, suffix);
}
