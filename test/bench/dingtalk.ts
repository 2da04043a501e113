/**
 * DingTalk end to end: N P2P chats × M messages through the whole server (its own process,
 * started like `npm start`, Stream mode against the fake DingTalk, replies streamed into AI
 * cards), with the fake model streaming at zero delay; then the same load on a bare
 * `dingtalk-stream` client answering each message with one session-webhook POST on the same
 * fake. `--baseline` runs that client.
 */
import { fileURLToPath } from 'node:url';
import { DWClient, type DWClientDownStream, TOPIC_ROBOT } from 'dingtalk-stream';
import { FakeDingTalk } from '../fakes/dingtalk/index.js';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { ANSWER_PAD, answerTo } from './final-watcher.js';
import { printOursVsBare } from './platforms.js';
import { startChatBenchServer, startProcess, stopProcess } from './server-process.js';
import { type LatencySummary, summarize } from './stats.js';
import type { PlatformFigures } from './telegram.js';

export interface DingTalkBenchOptions {
  chats: number;
  messagesPerChat: number;
  /** PostgreSQL URL for the server; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
}

const THIS_FILE = fileURLToPath(import.meta.url);

/** The final text a call showed: a card's finalize, or a session webhook / robot message. */
function finalTextOf(call: FakeDingTalk['calls'][number]): string | undefined {
  if (call.status !== 200) return undefined;
  const { body } = call;
  if (call.path === '/v1.0/card/streaming') return body.isFinalize === true ? String(body.content) : undefined;
  if (call.path === '/robot/sendBySession') {
    const markdown = body.markdown as { text?: string } | undefined;
    const text = body.text as { content?: string } | undefined;
    return markdown?.text ?? text?.content;
  }
  return undefined;
}

/** Resolves each expected final text with its latency, reading only calls it has not seen. */
class DingTalkFinalWatcher {
  private readonly pending = new Map<string, { sentAt: number; resolve: (latencyMs: number) => void }>();
  private seen = 0;
  private watching: Promise<unknown> | undefined;

  constructor(private readonly dingtalk: FakeDingTalk) {}

  expect(finalText: string, sentAt: number): Promise<number> {
    const done = new Promise<number>((resolve) => this.pending.set(finalText, { sentAt, resolve }));
    this.watching ??= this.dingtalk.waitFor(() => this.scan(), 3_600_000);
    return done;
  }

  private scan(): boolean {
    const calls = this.dingtalk.calls;
    for (; this.seen < calls.length; this.seen++) {
      const call = calls[this.seen];
      const text = call && finalTextOf(call);
      const entry = text === undefined ? undefined : this.pending.get(text);
      if (!call || !entry || text === undefined) continue;
      this.pending.delete(text);
      entry.resolve(call.at - entry.sentAt);
    }
    return false;
  }
}

/** Each chat sends its next message when the previous one's final text is on screen. */
async function drive(dingtalk: FakeDingTalk, chats: number, perChat: number, firstUser: number): Promise<LatencySummary> {
  const watcher = new DingTalkFinalWatcher(dingtalk);
  const latencies: number[] = [];
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      const user = `staff${firstUser + c}`;
      for (let m = 0; m < perChat; m++) {
        const text = `q ${user}-${m}`;
        const sentAt = Date.now();
        const final = watcher.expect(answerTo(text), sentAt);
        await dingtalk.sendUserMessage({ chat: 'private', userId: user, text });
        latencies.push(await final);
      }
    }),
  );
  return summarize(latencies, Date.now() - startedAt);
}

/** Runs the DingTalk benchmark and prints ours vs the bare client; `index.ts` wires it in. */
export async function runDingTalkBench(options: DingTalkBenchOptions): Promise<PlatformFigures> {
  const total = options.chats * options.messagesPerChat;
  const database = options.databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  console.log(`\ndingtalk on ${database}: ${options.chats} P2P chats × ${options.messagesPerChat} messages (${total}), AI cards, fake model streaming with zero delay`);

  const dingtalk = new FakeDingTalk();
  const model = new FakeOpenAI();
  await Promise.all([dingtalk.start(), model.start()]);
  model.respond = (request) => ({ text: answerTo(lastUserText(request.messages)) });
  const server = await startChatBenchServer({
    model,
    databaseUrl: options.databaseUrl,
    channel: `dingtalk: { enabled: true, client_id: "${dingtalk.clientId}", client_secret: "${dingtalk.clientSecret}", api_url: "${dingtalk.apiUrl}", card_template_id: "bench.schema" }`,
  });
  await dingtalk.waitFor(() => dingtalk.connectionsOpened > 0, 30_000);
  await drive(dingtalk, Math.min(options.chats, 5), 2, 1_000_000);
  const oursAlone = await drive(dingtalk, 1, options.messagesPerChat, 500_000);
  const ours = await drive(dingtalk, options.chats, options.messagesPerChat, 1);
  await stopProcess(server);

  const baselineDingTalk = new FakeDingTalk();
  await baselineDingTalk.start();
  const bot = await startProcess(
    [THIS_FILE, '--baseline', baselineDingTalk.apiUrl, baselineDingTalk.clientId, baselineDingTalk.clientSecret, ANSWER_PAD],
    (line) => line === 'ready',
  );
  await drive(baselineDingTalk, Math.min(options.chats, 5), 2, 1_000_000);
  const bareAlone = await drive(baselineDingTalk, 1, options.messagesPerChat, 500_000);
  const bare = await drive(baselineDingTalk, options.chats, options.messagesPerChat, 1);
  await stopProcess(bot);

  printOursVsBare({
    baseline: 'bare dingtalk-stream',
    chat: 'chat',
    messagesPerChat: options.messagesPerChat,
    chats: options.chats,
    ours: { alone: oursAlone, concurrent: ours },
    bare: { alone: bareAlone, concurrent: bare },
  });

  await Promise.all([dingtalk.stop(), baselineDingTalk.stop(), model.stop()]);
  return { alone: oursAlone, concurrent: ours };
}

/** The baseline: a bare `dingtalk-stream` client (gateway per sdk-recipes §5 Recipe A) answering each message with one session-webhook POST. */
async function runBaselineBot(apiUrl: string, clientId: string, clientSecret: string, suffix: string): Promise<void> {
  class Client extends DWClient {
    override async getEndpoint(): Promise<this> {
      const response = await fetch(`${apiUrl}/v1.0/gateway/connections/open`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ clientId, clientSecret, ua: '', subscriptions: this.config.subscriptions }),
      });
      const { endpoint, ticket } = (await response.json()) as { endpoint: string; ticket: string };
      (this as unknown as { dw_url: string }).dw_url = `${endpoint}?ticket=${ticket}`;
      return this;
    }
  }
  const client = new Client({ clientId, clientSecret });
  client.registerCallbackListener(TOPIC_ROBOT, (frame: DWClientDownStream) => {
    client.socketCallBackResponse(frame.headers.messageId, { status: 'SUCCESS' });
    const message = JSON.parse(frame.data) as { sessionWebhook: string; text?: { content?: string } };
    void fetch(message.sessionWebhook, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ msgtype: 'text', text: { content: `Answer to ${message.text?.content ?? ''}${suffix}` } }),
    }).catch(() => undefined);
  });
  process.on('SIGTERM', () => {
    client.disconnect();
    process.exit(0);
  });
  await client.getEndpoint();
  await client._connect();
  process.stdout.write('ready\n');
}

if (process.argv[1] === THIS_FILE && process.argv[2] === '--baseline') {
  const [apiUrl, clientId, clientSecret, suffix = ''] = process.argv.slice(3);
  if (!apiUrl || !clientId || !clientSecret) throw new Error('usage: dingtalk.ts --baseline <apiUrl> <clientId> <clientSecret> <answer suffix>');
  await runBaselineBot(apiUrl, clientId, clientSecret, suffix);
}
