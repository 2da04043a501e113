/**
 * Faults a server must come through without losing or doubling a message (issue #15), each tried
 * many times; the figures `docs/reliability.md` records: the embedded default killed (-9) while it
 * answers three chats, then started again on the same data dir; more chats at once than its
 * intake holds; and a storm of 429s on Telegram's edits while 20 chats stream.
 *
 * Each round kills the server at another point: even rounds once every chat shows part of its
 * answer, odd rounds as soon as every chat shows its placeholder ("Working on it...") and Telegram
 * has the updates confirmed (a message may then still wait in the queue). After the restart each
 * message must end answered, or told that the server restarted, in one bot message.
 * The baseline is a start of the server on the same data dir: recovery (kill to every final on
 * screen) is printed as a ratio to it.
 */
import type { ChildProcess } from 'node:child_process';
import { answerByAttempt, FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { SERVER_BUNDLE, startProcess, stopProcess, writeChatBenchConfig } from './server-process.js';
import { percentile } from './stats.js';

export interface FaultsBenchOptions {
  /** Rounds of kill -9 and restart. */
  kills: number;
}

const CHATS_PER_ROUND = 3;
/** What the person sees when the turn is told rather than run again (`MESSAGES.interruptedByRestart`). */
const TOLD = 'The server restarted before it could answer this message. Please send it again.';
/** How long a message may take to end after the restart before it counts as lost. */
const FINAL_WAIT_MS = 60_000;

type Outcome = 'answered' | 'told' | 'lost';

export async function runFaultsBench(options: FaultsBenchOptions): Promise<void> {
  await killMidAnswer(options);
  await overload();
  await rateLimitStorm();
}

async function killMidAnswer(options: FaultsBenchOptions): Promise<void> {
  const telegram = new FakeTelegram();
  const model = new FakeOpenAI();
  // Every first attempt streams slowly (40 deltas 250 ms apart), so the kill lands mid-answer.
  const { respond, asked } = answerByAttempt((question, attempt) =>
    attempt === 1 ? { chunks: Array.from({ length: 40 }, (_, i) => `${question}-part${i} `), chunkDelayMs: 250 } : { text: answerTo(question) },
  );
  model.respond = respond;
  await Promise.all([telegram.start(), model.start()]);
  const configPath = writeServerConfig(telegram, model);
  const startMs: number[] = [];
  const start = async (): Promise<ChildProcess> => {
    const startedAt = Date.now();
    const child = await startProcess([SERVER_BUNDLE, '--config', configPath], (line) => line.includes('"channel started"'), { runsCompiled: true });
    startMs.push(Date.now() - startedAt);
    return child;
  };

  const outcomes: Record<Outcome, number> = { answered: 0, told: 0, lost: 0 };
  let doubled = 0;
  const recoveryMs: number[] = [];
  process.stdout.write(`\nfaults: kill -9 of the embedded server mid-answer, ${options.kills} rounds × ${CHATS_PER_ROUND} chats (Telegram, PGlite)\n`);
  let server = await start();
  for (let round = 0; round < options.kills; round++) {
    const chats = Array.from({ length: CHATS_PER_ROUND }, (_, i) => 9000 + round * 10 + i);
    for (const chatId of chats) telegram.sendUserMessage({ chatId, chatType: 'private', text: `question ${chatId}` });
    const isShown = round % 2 === 0 ? (text: string) => text.includes('-part0') : (text: string) => text !== '';
    for (const chatId of chats) await telegram.waitFor(() => telegram.botMessages(chatId).some((m) => isShown(m.text)), 30_000);
    await telegram.waitFor(() => telegram.unconfirmedUpdates() === 0, 30_000);
    const killedAt = Date.now();
    server.kill('SIGKILL');
    await new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve(undefined)));
    server = await start();
    const ends = await Promise.all(chats.map((chatId) => endOf(telegram, chatId)));
    recoveryMs.push(Date.now() - killedAt);
    for (const [i, chatId] of chats.entries()) {
      outcomes[ends[i] as Outcome]++;
      // Doubled: the person sees more than one bot message, or the answer was produced more than once after the crash.
      if (telegram.botMessages(chatId).length > 1 || (asked.get(`question ${chatId}`) ?? 0) > 2) doubled++;
    }
  }
  await stopProcess(server);
  await Promise.all([telegram.stop(), model.stop()]);

  const tried = options.kills * CHATS_PER_ROUND;
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const restartP50 = percentile(sorted(startMs), 50);
  const recoveryP50 = percentile(sorted(recoveryMs), 50);
  process.stdout.write(
    [
      'fault                                   tried  answered   told   lost  doubled',
      `kill -9 mid-answer, restart          ${String(tried).padStart(8)}${String(outcomes.answered).padStart(10)}${String(outcomes.told).padStart(7)}${String(outcomes.lost).padStart(7)}${String(doubled).padStart(9)}`,
      `start on the same data dir, p50 ${Math.round(restartP50)} ms; kill to every final on screen, p50 ${Math.round(recoveryP50)} ms (${(recoveryP50 / restartP50).toFixed(2)}× a start)`,
      '',
    ].join('\n'),
  );
}

function answerTo(question: string): string {
  return `Answered: ${question}`;
}

/** How the chat's message ended after the restart: its answer, the restart notice, or nothing in time. */
async function endOf(telegram: FakeTelegram, chatId: number): Promise<Outcome> {
  const answer = answerTo(`question ${chatId}`);
  try {
    // A message killed before it reached the model gets its first (slow) answer after the restart.
    const slowAnswer = `question ${chatId}-part39 `;
    const final = await telegram.waitFor(
      () => telegram.botMessages(chatId).find((m) => m.text === answer || m.text.endsWith(slowAnswer) || m.text === TOLD),
      FINAL_WAIT_MS,
    );
    return final.text === TOLD ? 'told' : 'answered';
  } catch {
    return 'lost';
  }
}

/** The faults' server config in a fresh folder: the fake model, Telegram on its fake, `channelSettings` beside it. */
function writeServerConfig(telegram: FakeTelegram, model: FakeOpenAI, channelSettings: string[] = []): string {
  const channel = `telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }`;
  return writeChatBenchConfig({ model, channel, channelSettings });
}

/**
 * 200 chats write at once to a server whose intake holds 50 (issue #15's overload row). The
 * baseline is the same load on an intake that holds them all: the time to the last answer is
 * printed as a ratio to it.
 */
async function overload(): Promise<void> {
  const chats = 200;
  process.stdout.write(`\nfaults: ${chats} chats at once, inbound_queue_maxsize 50 against 1000 (Telegram, PGlite)\n`);
  process.stdout.write('intake      tried  answered   lost  doubled   last answer after\n');
  const rows: { maxsize: number; wallMs: number }[] = [];
  for (const maxsize of [1000, 50]) {
    const telegram = new FakeTelegram();
    const model = new FakeOpenAI();
    model.respond = (request) => ({ chunks: ['Answered: ', lastUserText(request.messages)], chunkDelayMs: 5 });
    await Promise.all([telegram.start(), model.start()]);
    const configPath = writeServerConfig(telegram, model, [`inbound_queue_maxsize: ${maxsize}`]);
    const server = await startProcess([SERVER_BUNDLE, '--config', configPath], (line) => line.includes('"channel started"'), { runsCompiled: true });
    const ids = Array.from({ length: chats }, (_, i) => 9500 + i);
    const startedAt = Date.now();
    for (const chatId of ids) telegram.sendUserMessage({ chatId, chatType: 'private', text: `question ${chatId}` });
    const answered = await Promise.all(
      ids.map((chatId) =>
        telegram
          .waitFor(() => telegram.botMessages(chatId).find((m) => m.text === answerTo(`question ${chatId}`)), 120_000)
          .then(() => true, () => false),
      ),
    );
    const wallMs = Date.now() - startedAt;
    const doubled = ids.filter((chatId) => telegram.botMessages(chatId).length > 1).length + Math.max(0, model.requests.length - chats);
    const count = answered.filter(Boolean).length;
    rows.push({ maxsize, wallMs });
    const baseline = rows[0]?.wallMs ?? wallMs;
    process.stdout.write(
      `${String(maxsize).padStart(6)}${String(chats).padStart(11)}${String(count).padStart(10)}${String(chats - count).padStart(7)}${String(doubled).padStart(9)}   ${wallMs} ms (${(wallMs / baseline).toFixed(2)}×)\n`,
    );
    await stopProcess(server);
    await Promise.all([telegram.stop(), model.stop()]);
  }
}

/**
 * Issue #15's storm row: 20 chats stream at once while Telegram answers 60 edits with 429
 * `retry_after` 3 s. Every final must reach its chat, once, in its placeholder, with no request
 * inside a `retry_after`. The baseline is the same load without the 429s: the time to the last
 * final is printed as a ratio to it.
 */
async function rateLimitStorm(): Promise<void> {
  const chats = 20;
  const storm = { errorCode: 429, retryAfter: 3 } as const;
  process.stdout.write(`\nfaults: ${chats} streaming chats, 60 edits answered 429 retry_after ${storm.retryAfter} s (Telegram, PGlite)\n`);
  process.stdout.write('429s        tried  answered   lost  doubled  ignored retry_after   last final after\n');
  let baselineMs: number | undefined;
  for (const refusals of [0, 60]) {
    const telegram = new FakeTelegram();
    const model = new FakeOpenAI();
    model.respond = (request) => ({ chunks: Array.from({ length: 8 }, (_, i) => `part${i} `).concat([answerTo(lastUserText(request.messages))]), chunkDelayMs: 200 });
    await Promise.all([telegram.start(), model.start()]);
    const server = await startProcess([SERVER_BUNDLE, '--config', writeServerConfig(telegram, model)], (line) => line.includes('"channel started"'), { runsCompiled: true });
    if (refusals > 0) telegram.failNext('editMessageText', storm, refusals);
    const ids = Array.from({ length: chats }, (_, i) => 9700 + i);
    const startedAt = Date.now();
    for (const chatId of ids) telegram.sendUserMessage({ chatId, chatType: 'private', text: `question ${chatId}` });
    const finalOf = (chatId: number) => `part0 part1 part2 part3 part4 part5 part6 part7 ${answerTo(`question ${chatId}`)}`;
    const answered = await Promise.all(
      ids.map((chatId) =>
        telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.text === finalOf(chatId)), 120_000).then(
          () => true,
          () => false,
        ),
      ),
    );
    const wallMs = Date.now() - startedAt;
    baselineMs ??= wallMs;
    const count = answered.filter(Boolean).length;
    const doubled = ids.filter((chatId) => telegram.botMessages(chatId).length > 1).length;
    process.stdout.write(
      `${String(refusals).padStart(4)}${String(chats).padStart(11)}${String(count).padStart(10)}${String(chats - count).padStart(7)}${String(doubled).padStart(9)}${String(telegram.rateLimitViolations.length).padStart(22)}   ${wallMs} ms (${(wallMs / baselineMs).toFixed(2)}×)\n`,
    );
    await stopProcess(server);
    await Promise.all([telegram.stop(), model.stop()]);
  }
}
