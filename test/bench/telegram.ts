/**
 * Telegram end to end: N private chats × M messages through the whole server (its own process,
 * started like `npm start`), against the fake Bot API and a fake model streaming with zero delay;
 * then the same load on a bare grammY bot answering with one sendMessage; then resident memory of
 * the server after it mapped many conversations.
 *
 * Latency is measured from "update available" (the fake queued it for getUpdates) to the call that
 * put the final text on screen (the last edit, or the last message).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { formatRow, type LatencySummary, residentMiB, summarize } from './stats.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const ANSWER_PAD = ' — a short answer of about two hundred characters, streamed in small deltas the way a real model writes, so the server has partial updates to throttle and edit.';

export interface TelegramBenchOptions {
  chats: number;
  messagesPerChat: number;
  conversations: number;
  /** PostgreSQL URL for the server; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
}

/** Starts a TypeScript entry point in its own process and resolves once it printed `readyLine`. */
async function startProcess(args: string[], isReady: (line: string) => boolean): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', TSX, ...args], {
    cwd: mkdtempSync(join(tmpdir(), 'dfc-bench-')),
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // An orphaned bot would keep polling a port a later fake may reuse, and steal its updates.
  process.once('exit', () => child.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      if (lines.some(isReady)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`process exited with ${code} before it was ready`)));
  });
  child.stdout?.resume();
  return child;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * Watches the fake for the call that shows each expected final text. One watcher for all
 * outstanding messages, reading only calls it has not seen.
 */
class FinalWatcher {
  private readonly pending = new Map<string, { sentAt: number; resolve: (latencyMs: number) => void }>();
  private seen = 0;
  private watching: Promise<unknown> | undefined;

  constructor(private readonly telegram: FakeTelegram) {}

  expect(finalText: string, sentAt: number): Promise<number> {
    const done = new Promise<number>((resolve) => this.pending.set(finalText, { sentAt, resolve }));
    this.watching ??= this.telegram.waitFor(() => this.scan(), 3_600_000);
    return done;
  }

  private scan(): boolean {
    const calls = this.telegram.calls;
    for (; this.seen < calls.length; this.seen++) {
      const call = calls[this.seen];
      if (!call || (call.method !== 'sendMessage' && call.method !== 'editMessageText')) continue;
      const entry = this.pending.get(String(call.params.text));
      if (!entry) continue;
      this.pending.delete(String(call.params.text));
      entry.resolve(call.at - entry.sentAt);
    }
    return false;
  }
}

/** Each chat sends its next message when the previous one's final text is on screen. */
async function drive(telegram: FakeTelegram, chats: number, perChat: number, firstChatId: number): Promise<LatencySummary> {
  const watcher = new FinalWatcher(telegram);
  const latencies: number[] = [];
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      const chatId = firstChatId + c;
      for (let m = 0; m < perChat; m++) {
        const text = `q ${chatId}-${m}`;
        const sentAt = Date.now();
        const final = watcher.expect(`Answer to ${text}${ANSWER_PAD}`, sentAt);
        telegram.sendUserMessage({ chatId, chatType: 'private', text });
        latencies.push(await final);
      }
    }),
  );
  return summarize(latencies, Date.now() - startedAt);
}

function answering(model: FakeOpenAI): void {
  model.respond = (request) => ({ text: `Answer to ${lastUserText(request.messages)}${ANSWER_PAD}` });
}

export async function runTelegramBench(options: TelegramBenchOptions): Promise<void> {
  const total = options.chats * options.messagesPerChat;
  const database = options.databaseUrl ? 'PostgreSQL' : 'embedded PGlite';
  console.log(
    `\ntelegram on ${database}: ${options.chats} private chats × ${options.messagesPerChat} messages (${total}), fake model streaming with zero delay`,
  );

  // The server, as `npm start` runs it.
  const telegram = new FakeTelegram();
  const model = new FakeOpenAI();
  await Promise.all([telegram.start(), model.start()]);
  answering(model);
  const dir = mkdtempSync(join(tmpdir(), 'dfc-bench-'));
  const configPath = join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    `server: { port: 0 }
data_dir: ${join(dir, 'data')}
${options.databaseUrl ? `database: { url: "${options.databaseUrl}" }` : ''}
log: { level: info }  # the bench reads the "server listening" line
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-bench, max_retries: 0 }
channels:
  max_concurrency: 5
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`,
  );
  const server = await startProcess([join(ROOT, 'src/main.ts'), '--config', configPath], (line) =>
    line.includes('"server listening"'),
  );
  const idleMiB = await residentMiB(server.pid as number);
  await drive(telegram, Math.min(options.chats, 5), 2, 1_000_000); // warm-up: JIT, connections, first thread
  const oursAlone = await drive(telegram, 1, options.messagesPerChat, 500_000);
  const ours = await drive(telegram, options.chats, options.messagesPerChat, 1);

  // The baseline on a fresh fake, so neither run sees the other's recorded calls.
  const baselineTelegram = new FakeTelegram();
  await baselineTelegram.start();
  const bot = await startProcess([join(ROOT, 'test/bench/baseline-bot.ts'), baselineTelegram.apiRoot, baselineTelegram.token, ANSWER_PAD], (line) => line === 'ready');
  await drive(baselineTelegram, Math.min(options.chats, 5), 2, 1_000_000);
  const bareAlone = await drive(baselineTelegram, 1, options.messagesPerChat, 500_000);
  const bare = await drive(baselineTelegram, options.chats, options.messagesPerChat, 1);
  await stopProcess(bot);
  await baselineTelegram.stop();

  const ratio = (a: LatencySummary, b: LatencySummary) =>
    `${'ratio (ours / bare)'.padEnd(24)} ${(a.perSecond / b.perSecond).toFixed(2).padStart(9)} ${(a.p50Ms / b.p50Ms).toFixed(2).padStart(9)} ${(a.p99Ms / b.p99Ms).toFixed(2).padStart(9)}`;
  console.log(`${''.padEnd(24)} ${'msgs/s'.padStart(9)} ${'p50 ms'.padStart(9)} ${'p99 ms'.padStart(9)}`);
  console.log(`one chat, ${options.messagesPerChat} messages in a row (latency without queueing)`);
  console.log(formatRow('  deerflow-channels', oursAlone));
  console.log(formatRow('  bare grammY bot', bareAlone));
  console.log(ratio(oursAlone, bareAlone));
  console.log(`${options.chats} chats at once (throughput; latency includes waiting for a worker)`);
  console.log(formatRow('  deerflow-channels', ours));
  console.log(formatRow('  bare grammY bot', bare));
  console.log(ratio(ours, bare));

  // Memory: many distinct conversations, each mapped to its own thread.
  const already = options.chats + 1 + Math.min(options.chats, 5); // measured, lone and warm-up chats
  const remaining = Math.max(0, options.conversations - already);
  const startedAt = Date.now();
  const batch = 200;
  for (let first = 0; first < remaining; first += batch) {
    await drive(telegram, Math.min(batch, remaining - first), 1, 2_000_000 + first);
  }
  const seconds = (Date.now() - startedAt) / 1000;
  const loadedMiB = await residentMiB(server.pid as number);
  console.log(
    `resident memory: ${idleMiB.toFixed(0)} MiB idle, ${loadedMiB.toFixed(0)} MiB after ${options.conversations} mapped conversations (the last ${remaining} took ${seconds.toFixed(1)} s, ${(remaining / seconds).toFixed(0)} conversations/s)`,
  );

  await stopProcess(server);
  await Promise.all([telegram.stop(), model.stop()]);
}
