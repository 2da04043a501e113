/**
 * WeChat end to end: N people × M messages through the whole server (its own process, started
 * like `npm start`, iLink long polling against the fake WeChat, a standing acknowledgement and the
 * final as a new message), with the fake model answering at once; then the same load on a bare
 * iLink loop (there is no SDK: one `getupdates` poller answering each message with one
 * `sendmessage`) on the same kind of fake. `--baseline` runs that loop.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeWeChat } from '../fakes/wechat/index.js';
import { ANSWER_PAD, answerTo } from './final-watcher.js';
import { printOursVsBare } from './platforms.js';
import { startChatBenchServer, startProcess, stopProcess } from './server-process.js';
import { type LatencySummary, summarize } from './stats.js';
import type { PlatformFigures } from './telegram.js';

export interface WeChatBenchOptions {
  chats: number;
  messagesPerChat: number;
  /** PostgreSQL URL for the server; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
}

const THIS_FILE = fileURLToPath(import.meta.url);
/** The fake's long-poll hold: short, so neither side waits on an idle poll. */
const HOLD_MS = 1000;

/** Resolves each expected final text with its latency (to its `sendmessage` arriving), reading only calls it has not seen. */
class WeChatFinalWatcher {
  private readonly pending = new Map<string, { sentAt: number; resolve: (latencyMs: number) => void }>();
  private seen = 0;
  private watching: Promise<unknown> | undefined;

  constructor(private readonly wechat: FakeWeChat) {}

  expect(finalText: string, sentAt: number): Promise<number> {
    const done = new Promise<number>((resolve) => this.pending.set(finalText, { sentAt, resolve }));
    this.watching ??= this.wechat.waitFor(() => this.scan(), 3_600_000);
    return done;
  }

  private scan(): boolean {
    const calls = this.wechat.calls;
    for (; this.seen < calls.length; this.seen++) {
      const call = calls[this.seen];
      if (call?.path !== '/ilink/bot/sendmessage' || call.ret !== 0) continue;
      const item = (call.body as { msg?: { item_list?: { text_item?: { text?: string } }[] } }).msg?.item_list?.[0];
      const text = item?.text_item?.text;
      const entry = text === undefined ? undefined : this.pending.get(text);
      if (!entry || text === undefined) continue;
      this.pending.delete(text);
      entry.resolve(call.at - entry.sentAt);
    }
    return false;
  }
}

/** Each person sends their next message when the previous one's final is in their chat. */
async function drive(wechat: FakeWeChat, chats: number, perChat: number, firstUser: number): Promise<LatencySummary> {
  const watcher = new WeChatFinalWatcher(wechat);
  const latencies: number[] = [];
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      const user = `user${firstUser + c}@im.wechat`;
      for (let m = 0; m < perChat; m++) {
        const text = `q ${user}-${m}`;
        const sentAt = Date.now();
        const final = watcher.expect(answerTo(text), sentAt);
        wechat.sendUserMessage({ userId: user, text });
        latencies.push(await final);
      }
    }),
  );
  return summarize(latencies, Date.now() - startedAt);
}

/** Runs the WeChat benchmark and prints ours vs the bare loop; `index.ts` wires it in. */
export async function runWeChatBench(options: WeChatBenchOptions): Promise<PlatformFigures> {
  const total = options.chats * options.messagesPerChat;
  const database = options.databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  console.log(`\nwechat on ${database}: ${options.chats} people × ${options.messagesPerChat} messages (${total}), final only (no edits), fake model with zero delay`);

  const wechat = new FakeWeChat({ longPollHoldMs: HOLD_MS });
  const model = new FakeOpenAI();
  await Promise.all([wechat.start(), model.start()]);
  model.respond = (request) => ({ text: answerTo(lastUserText(request.messages)) });
  const server = await startChatBenchServer({
    model,
    databaseUrl: options.databaseUrl,
    channel: `wechat: { enabled: true, bot_token: "${wechat.token}", base_url: "${wechat.baseUrl}", cdn_base_url: "${wechat.cdnBaseUrl}", polling_timeout: ${HOLD_MS / 1000} }`,
  });
  await wechat.waitFor(() => wechat.calls.some((c) => c.path === '/ilink/bot/getupdates'), 30_000);
  await drive(wechat, Math.min(options.chats, 5), 2, 1_000_000);
  const oursAlone = await drive(wechat, 1, options.messagesPerChat, 500_000);
  const ours = await drive(wechat, options.chats, options.messagesPerChat, 1);
  await stopProcess(server);

  const baselineWeChat = new FakeWeChat({ longPollHoldMs: HOLD_MS });
  await baselineWeChat.start();
  const bot = await startProcess([THIS_FILE, '--baseline', baselineWeChat.baseUrl, baselineWeChat.token, ANSWER_PAD], (line) => line === 'ready');
  await drive(baselineWeChat, Math.min(options.chats, 5), 2, 1_000_000);
  const bareAlone = await drive(baselineWeChat, 1, options.messagesPerChat, 500_000);
  const bare = await drive(baselineWeChat, options.chats, options.messagesPerChat, 1);
  await stopProcess(bot);

  printOursVsBare({
    baseline: 'bare iLink loop',
    chat: 'person',
    messagesPerChat: options.messagesPerChat,
    chats: options.chats,
    ours: { alone: oursAlone, concurrent: ours },
    bare: { alone: bareAlone, concurrent: bare },
  });

  await Promise.all([wechat.stop(), baselineWeChat.stop(), model.stop()]);
  return { alone: oursAlone, concurrent: ours };
}

/** The baseline: one `getupdates` loop answering every person's message with one `sendmessage`, nothing persisted. */
async function runBaselineBot(baseUrl: string, token: string, suffix: string): Promise<void> {
  const headers = () => ({
    'content-type': 'application/json',
    AuthorizationType: 'ilink_bot_token',
    Authorization: `Bearer ${token}`,
    'X-WECHAT-UIN': Buffer.from(String(randomBytes(4).readUInt32BE(0))).toString('base64'),
    'iLink-App-Id': 'bot',
  });
  let cursor = '';
  let isStopping = false;
  process.on('SIGTERM', () => {
    isStopping = true;
    process.exit(0);
  });
  process.stdout.write('ready\n');
  while (!isStopping) {
    const response = await fetch(`${baseUrl}/ilink/bot/getupdates`, { method: 'POST', headers: headers(), body: JSON.stringify({ get_updates_buf: cursor }) });
    const answer = (await response.json()) as { msgs?: { from_user_id: string; message_type: number; context_token: string; item_list: { text_item?: { text?: string } }[] }[]; get_updates_buf?: string };
    cursor = answer.get_updates_buf ?? cursor;
    for (const message of answer.msgs ?? []) {
      if (message.message_type !== 1) continue;
      const text = message.item_list[0]?.text_item?.text ?? '';
      void fetch(`${baseUrl}/ilink/bot/sendmessage`, {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify({
          msg: { to_user_id: message.from_user_id, client_id: randomBytes(8).toString('hex'), message_type: 2, message_state: 2, context_token: message.context_token, item_list: [{ type: 1, text_item: { text: `Answer to ${text}${suffix}` } }] },
        }),
      }).catch(() => undefined);
    }
  }
}

if (process.argv[1] === THIS_FILE && process.argv[2] === '--baseline') {
  const [baseUrl, token, suffix = ''] = process.argv.slice(3);
  if (!baseUrl || !token) throw new Error('usage: wechat.ts --baseline <baseUrl> <token> <answer suffix>');
  await runBaselineBot(baseUrl, token, suffix);
}
