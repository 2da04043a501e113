/**
 * WeCom end to end: N single chats × M messages through the whole server (its own process,
 * started like `npm start`, the SDK's long connection to the fake WeCom, replies streamed into
 * the acknowledgement's stream), with the fake model streaming at zero delay; then the same load
 * on a bare `@wecom/aibot-node-sdk` client answering each message with one finished stream frame
 * on the same fake. `--baseline` runs that client.
 */
import { fileURLToPath } from 'node:url';
import { type WsFrame, WSClient } from '@wecom/aibot-node-sdk';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeWeCom, type RecordedFrame } from '../fakes/wecom/index.js';
import { ANSWER_PAD, answerTo } from './final-watcher.js';
import { printOursVsBare } from './platforms.js';
import { startChatBenchServer, startProcess, stopProcess } from './server-process.js';
import { type LatencySummary, summarize } from './stats.js';
import type { PlatformFigures } from './telegram.js';

export interface WeComBenchOptions {
  chats: number;
  messagesPerChat: number;
  /** PostgreSQL URL for the server; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
}

const THIS_FILE = fileURLToPath(import.meta.url);

/** The final text a frame showed: a finished stream, or a markdown message. */
function finalTextOf(frame: RecordedFrame): string | undefined {
  if (frame.errcode !== 0) return undefined;
  if (frame.cmd === 'aibot_respond_msg') {
    const stream = frame.body.stream as { finish?: boolean; content?: string } | undefined;
    return stream?.finish === true ? stream.content : undefined;
  }
  if (frame.cmd === 'aibot_send_msg') return (frame.body.markdown as { content?: string } | undefined)?.content;
  return undefined;
}

/** Resolves each expected final text with its latency, reading only frames it has not seen. */
class WeComFinalWatcher {
  private readonly pending = new Map<string, { sentAt: number; resolve: (latencyMs: number) => void }>();
  private seen = 0;
  private watching: Promise<unknown> | undefined;

  constructor(private readonly wecom: FakeWeCom) {}

  expect(finalText: string, sentAt: number): Promise<number> {
    const done = new Promise<number>((resolve) => this.pending.set(finalText, { sentAt, resolve }));
    this.watching ??= this.wecom.waitFor(() => this.scan(), 3_600_000);
    return done;
  }

  private scan(): boolean {
    const frames = this.wecom.frames;
    for (; this.seen < frames.length; this.seen++) {
      const frame = frames[this.seen];
      const text = frame && finalTextOf(frame);
      const entry = text === undefined ? undefined : this.pending.get(text);
      if (!frame || !entry || text === undefined) continue;
      this.pending.delete(text);
      entry.resolve(frame.at - entry.sentAt);
    }
    return false;
  }
}

/** Each chat sends its next message when the previous one's final text is on screen. */
async function drive(wecom: FakeWeCom, chats: number, perChat: number, firstUser: number): Promise<LatencySummary> {
  const watcher = new WeComFinalWatcher(wecom);
  const latencies: number[] = [];
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      const user = `user${firstUser + c}`;
      for (let m = 0; m < perChat; m++) {
        const text = `q ${user}-${m}`;
        const sentAt = Date.now();
        const final = watcher.expect(answerTo(text), sentAt);
        await wecom.sendUserMessage({ chat: 'private', userId: user, text });
        latencies.push(await final);
      }
    }),
  );
  return summarize(latencies, Date.now() - startedAt);
}

/** Runs the WeCom benchmark and prints ours vs the bare client; `index.ts` wires it in. */
export async function runWeComBench(options: WeComBenchOptions): Promise<PlatformFigures> {
  const total = options.chats * options.messagesPerChat;
  const database = options.databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  console.log(`\nwecom on ${database}: ${options.chats} single chats × ${options.messagesPerChat} messages (${total}), stream replies, fake model streaming with zero delay`);

  const wecom = new FakeWeCom();
  const model = new FakeOpenAI();
  await Promise.all([wecom.start(), model.start()]);
  model.respond = (request) => ({ text: answerTo(lastUserText(request.messages)) });
  const server = await startChatBenchServer({
    model,
    databaseUrl: options.databaseUrl,
    channel: `wecom: { enabled: true, bot_id: "${wecom.botId}", bot_secret: "${wecom.secret}", ws_url: "${wecom.wsUrl}" }`,
  });
  await wecom.waitFor(() => wecom.isAuthenticated(), 30_000);
  await drive(wecom, Math.min(options.chats, 5), 2, 1_000_000);
  const oursAlone = await drive(wecom, 1, options.messagesPerChat, 500_000);
  const ours = await drive(wecom, options.chats, options.messagesPerChat, 1);
  await stopProcess(server);

  const baselineWeCom = new FakeWeCom();
  await baselineWeCom.start();
  const bot = await startProcess([THIS_FILE, '--baseline', baselineWeCom.wsUrl, baselineWeCom.botId, baselineWeCom.secret, ANSWER_PAD], (line) => line === 'ready');
  await drive(baselineWeCom, Math.min(options.chats, 5), 2, 1_000_000);
  const bareAlone = await drive(baselineWeCom, 1, options.messagesPerChat, 500_000);
  const bare = await drive(baselineWeCom, options.chats, options.messagesPerChat, 1);
  await stopProcess(bot);

  printOursVsBare({
    baseline: 'bare aibot-node-sdk',
    chat: 'chat',
    messagesPerChat: options.messagesPerChat,
    chats: options.chats,
    ours: { alone: oursAlone, concurrent: ours },
    bare: { alone: bareAlone, concurrent: bare },
  });

  await Promise.all([wecom.stop(), baselineWeCom.stop(), model.stop()]);
  return { alone: oursAlone, concurrent: ours };
}

/** The baseline: a bare SDK client answering each text message with one finished stream frame. */
async function runBaselineBot(wsUrl: string, botId: string, secret: string, suffix: string): Promise<void> {
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const client = new WSClient({ botId, secret, wsUrl, logger: quiet });
  client.on('message.text', (frame: WsFrame) => {
    const body = frame.body as { text?: { content?: string } };
    void client.replyStream(frame, `bare-${frame.headers.req_id}`, `Answer to ${body.text?.content ?? ''}${suffix}`, true).catch(() => undefined);
  });
  process.on('SIGTERM', () => {
    client.disconnect();
    process.exit(0);
  });
  await new Promise<void>((resolve) => {
    client.once('authenticated', () => resolve());
    client.connect();
  });
  process.stdout.write('ready\n');
}

if (process.argv[1] === THIS_FILE && process.argv[2] === '--baseline') {
  const [wsUrl, botId, secret, suffix = ''] = process.argv.slice(3);
  if (!wsUrl || !botId || !secret) throw new Error('usage: wecom.ts --baseline <wsUrl> <botId> <secret> <answer suffix>');
  await runBaselineBot(wsUrl, botId, secret, suffix);
}
