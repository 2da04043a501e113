/**
 * Feishu end to end: N p2p chats × M messages through the whole server (its own process, started
 * like `npm start`, long connection against the fake Feishu), with the fake model streaming at
 * zero delay; then the same load on a bare Lark SDK app (WSClient + EventDispatcher) answering
 * each message with one reply on the same fake. `--baseline` runs that app.
 */
import { fileURLToPath } from 'node:url';
import * as lark from '@larksuiteoapi/node-sdk';
import { FakeFeishu, textOf } from '../fakes/feishu/index.js';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { ANSWER_PAD, answerTo } from './final-watcher.js';
import { printOursVsBare } from './platforms.js';
import { startChatBenchServer, startProcess, stopProcess } from './server-process.js';
import { type LatencySummary, summarize } from './stats.js';
import type { PlatformFigures } from './telegram.js';

export interface FeishuBenchOptions {
  chats: number;
  messagesPerChat: number;
  /** PostgreSQL URL for the server; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
}

const THIS_FILE = fileURLToPath(import.meta.url);

/** Resolves each expected final text with its latency, reading only FakeFeishu calls it has not seen. */
class FeishuFinalWatcher {
  private readonly pending = new Map<string, { sentAt: number; resolve: (latencyMs: number) => void }>();
  private seen = 0;
  private watching: Promise<unknown> | undefined;

  constructor(private readonly feishu: FakeFeishu) {}

  expect(finalText: string, sentAt: number): Promise<number> {
    const done = new Promise<number>((resolve) => this.pending.set(finalText, { sentAt, resolve }));
    this.watching ??= this.feishu.waitFor(() => this.scan(), 3_600_000);
    return done;
  }

  private scan(): boolean {
    const calls = this.feishu.calls;
    for (; this.seen < calls.length; this.seen++) {
      const call = calls[this.seen];
      if (!call || (call.operation !== 'send' && call.operation !== 'patch') || call.code !== 0) continue;
      // CardKit element updates carry the markdown itself; messages and PATCHes a card or text JSON.
      const isCardkit = call.path.startsWith('/open-apis/cardkit/');
      const text = isCardkit ? String(call.body.content) : textOf(typeof call.body.msg_type === 'string' ? call.body.msg_type : 'interactive', String(call.body.content));
      const entry = this.pending.get(text);
      if (!entry) continue;
      this.pending.delete(text);
      entry.resolve(call.at - entry.sentAt);
    }
    return false;
  }
}

/** Each p2p chat sends its next message when the previous one's final text is on screen. */
async function drive(feishu: FakeFeishu, chats: number, perChat: number, firstUser: number): Promise<LatencySummary> {
  const watcher = new FeishuFinalWatcher(feishu);
  const latencies: number[] = [];
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      const openId = `ou_${firstUser + c}`;
      for (let m = 0; m < perChat; m++) {
        const text = `q ${openId}-${m}`;
        const sentAt = Date.now();
        const final = watcher.expect(answerTo(text), sentAt);
        feishu.sendUserMessage({ chatId: `oc_${openId}`, chatType: 'p2p', openId, text });
        latencies.push(await final);
      }
    }),
  );
  return summarize(latencies, Date.now() - startedAt);
}

/** Runs the Feishu benchmark and prints ours vs the bare SDK app; `index.ts` wires it in. */
export async function runFeishuBench(options: FeishuBenchOptions): Promise<PlatformFigures> {
  const total = options.chats * options.messagesPerChat;
  const database = options.databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  console.log(`\nfeishu on ${database}: ${options.chats} p2p chats × ${options.messagesPerChat} messages (${total}), fake model streaming with zero delay`);

  const feishu = new FakeFeishu();
  const model = new FakeOpenAI();
  await Promise.all([feishu.start(), model.start()]);
  model.respond = (request) => ({ text: answerTo(lastUserText(request.messages)) });
  const server = await startChatBenchServer({
    model,
    databaseUrl: options.databaseUrl,
    channel: `feishu: { enabled: true, app_id: "${feishu.appId}", app_secret: "${feishu.appSecret}", domain: "${feishu.url}" }`,
  });
  await feishu.waitFor(() => feishu.connectionCount() > 0, 30_000);
  await drive(feishu, Math.min(options.chats, 5), 2, 1_000_000);
  const oursAlone = await drive(feishu, 1, options.messagesPerChat, 500_000);
  const ours = await drive(feishu, options.chats, options.messagesPerChat, 1);
  await stopProcess(server);
  // The bare app does not pace itself; ours must never exceed what real Feishu allows.
  const overLimits = [feishu.rateLimitViolations.length, feishu.cardRateViolations.length, feishu.appRateViolations.length];
  console.log(`requests over Feishu's limits (per chat 5/s, per card 10/s, per app and API 50/s and 1000/min): ${overLimits.join(', ')}`);

  const baselineFeishu = new FakeFeishu();
  await baselineFeishu.start();
  const bot = await startProcess([THIS_FILE, '--baseline', baselineFeishu.url, baselineFeishu.appId, baselineFeishu.appSecret, ANSWER_PAD], (line) => line === 'ready');
  await drive(baselineFeishu, Math.min(options.chats, 5), 2, 1_000_000);
  const bareAlone = await drive(baselineFeishu, 1, options.messagesPerChat, 500_000);
  const bare = await drive(baselineFeishu, options.chats, options.messagesPerChat, 1);
  await stopProcess(bot);

  printOursVsBare({
    baseline: 'bare Lark SDK app',
    chat: 'chat',
    messagesPerChat: options.messagesPerChat,
    chats: options.chats,
    ours: { alone: oursAlone, concurrent: ours },
    bare: { alone: bareAlone, concurrent: bare },
  });

  await Promise.all([feishu.stop(), baselineFeishu.stop(), model.stop()]);
  return { alone: oursAlone, concurrent: ours };
}

/** The baseline: a bare Lark SDK app on the long connection replying to every text message once. */
async function runBaselineBot(domain: string, appId: string, appSecret: string, suffix: string): Promise<void> {
  const client = new lark.Client({ appId, appSecret, domain, loggerLevel: lark.LoggerLevel.error });
  const dispatcher = new lark.EventDispatcher({ loggerLevel: lark.LoggerLevel.error }).register({
    'im.message.receive_v1': async (data) => {
      const text = (JSON.parse(data.message.content) as { text?: string }).text ?? '';
      // Hand off and return, so the frame is acked at once (as our adapter does).
      void client.im.message
        .reply({ path: { message_id: data.message.message_id }, data: { msg_type: 'text', content: JSON.stringify({ text: `Answer to ${text}${suffix}` }) } })
        .catch(() => undefined);
    },
  });
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  const ws = new lark.WSClient({ appId, appSecret, domain, loggerLevel: lark.LoggerLevel.error, onReady: () => onReady() });
  process.on('SIGTERM', () => {
    ws.close({ force: true });
    process.exit(0);
  });
  await ws.start({ eventDispatcher: dispatcher });
  await ready;
  process.stdout.write('ready\n');
}

if (process.argv[1] === THIS_FILE && process.argv[2] === '--baseline') {
  const [domain, appId, appSecret, suffix = ''] = process.argv.slice(3);
  if (!domain || !appId || !appSecret) throw new Error('usage: feishu.ts --baseline <domain> <appId> <appSecret> <answer suffix>');
  await runBaselineBot(domain, appId, appSecret, suffix);
}
