/**
 * Telegram end to end: N private chats × M messages through the whole server (its own process,
 * started like `npm start`), against the fake Bot API and a fake model streaming with zero delay;
 * then the same load on a bare grammY bot answering with one sendMessage; then resident memory of
 * the server after it mapped many conversations.
 *
 * Latency is measured from "update available" (the fake queued it for getUpdates) to the call that
 * put the final text on screen (the last edit, or the last message).
 */
import { join } from 'node:path';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { ANSWER_PAD, answerTo, FinalWatcher } from './final-watcher.js';
import { printOursVsBare } from './platforms.js';
import { ROOT, startBenchServer, startProcess, stopProcess } from './server-process.js';
import { type LatencySummary, residentMiB, summarize } from './stats.js';

export interface TelegramBenchOptions {
  chats: number;
  messagesPerChat: number;
  conversations: number;
  /** PostgreSQL URL for the server; absent → the embedded PGlite default. */
  databaseUrl?: string | undefined;
}

/** Each chat sends its next message when the previous one's final text is on screen. */
export async function drive(telegram: FakeTelegram, chats: number, perChat: number, firstChatId: number): Promise<LatencySummary> {
  const watcher = new FinalWatcher(telegram);
  const latencies: number[] = [];
  const startedAt = Date.now();
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      const chatId = firstChatId + c;
      for (let m = 0; m < perChat; m++) {
        const text = `q ${chatId}-${m}`;
        const sentAt = Date.now();
        const final = watcher.expect(answerTo(text), sentAt);
        telegram.sendUserMessage({ chatId, chatType: 'private', text });
        latencies.push(await final);
      }
    }),
  );
  return summarize(latencies, Date.now() - startedAt);
}

function answering(model: FakeOpenAI): void {
  model.respond = (request) => ({ text: answerTo(lastUserText(request.messages)) });
}

/** What a chat platform's bench reports for the cross-platform comparison (`index.ts`). */
export interface PlatformFigures {
  /** One chat, messages in a row. */
  alone: LatencySummary;
  /** Every chat at once. */
  concurrent: LatencySummary;
}

export async function runTelegramBench(options: TelegramBenchOptions): Promise<PlatformFigures> {
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
  const server = await startBenchServer({ telegram, model, databaseUrl: options.databaseUrl });
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

  printOursVsBare({
    baseline: 'bare grammY bot',
    chat: 'chat',
    messagesPerChat: options.messagesPerChat,
    chats: options.chats,
    ours: { alone: oursAlone, concurrent: ours },
    bare: { alone: bareAlone, concurrent: bare },
  });

  // Memory: many distinct conversations, each mapped to its own thread.
  const already = options.chats + 1 + Math.min(options.chats, 5); // measured, lone and warm-up chats
  const remaining = Math.max(0, options.conversations - already);
  const startedAt = Date.now();
  const batch = 200;
  // Resident memory at each quarter: a plateau is a working set, a slope is growth per conversation.
  const quarters: { conversations: number; mib: number }[] = [];
  let nextQuarter = 1;
  for (let first = 0; first < remaining; first += batch) {
    await drive(telegram, Math.min(batch, remaining - first), 1, 2_000_000 + first);
    const done = Math.min(first + batch, remaining);
    if (done >= (remaining * nextQuarter) / 4) {
      quarters.push({ conversations: already + done, mib: await residentMiB(server.pid as number) });
      nextQuarter++;
    }
  }
  const seconds = (Date.now() - startedAt) / 1000;
  const loadedMiB = await residentMiB(server.pid as number);
  console.log(
    `resident memory: ${idleMiB.toFixed(0)} MiB idle, ${loadedMiB.toFixed(0)} MiB after ${options.conversations} mapped conversations (the last ${remaining} took ${seconds.toFixed(1)} s, ${(remaining / seconds).toFixed(0)} conversations/s)`,
  );
  const [, half, , last] = quarters;
  if (half !== undefined && last !== undefined && last.conversations > half.conversations) {
    const kibPerConversation = ((last.mib - half.mib) * 1024) / (last.conversations - half.conversations);
    console.log(
      `  by quarter: ${quarters.map((q) => `${q.mib.toFixed(0)} MiB at ${q.conversations}`).join(', ')}; second half ${kibPerConversation.toFixed(1)} KiB per conversation`,
    );
  }

  await stopProcess(server);
  await Promise.all([telegram.stop(), model.stop()]);
  return { alone: oursAlone, concurrent: ours };
}
