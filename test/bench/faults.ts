/**
 * Faults a server must come through without losing or doubling a message (issue #15), each tried
 * many times; the figures `docs/reliability.md` records. So far one: the embedded default killed
 * (-9) while it answers three chats, then started again on the same data dir.
 *
 * Each round kills the server at another point: even rounds once every chat shows part of its
 * answer, odd rounds as soon as every chat shows its placeholder ("Working on it...") and Telegram
 * has the updates confirmed (a message may then still wait in the queue). After the restart each
 * message must end answered, or told that the server restarted, in one bot message.
 * The baseline is a start of the server on the same data dir: recovery (kill to every final on
 * screen) is printed as a ratio to it.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeOpenAI, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { SERVER_BUNDLE, startProcess, stopProcess, temporaryDir } from './server-process.js';
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
  const telegram = new FakeTelegram();
  const model = new FakeOpenAI();
  const asked = new Map<string, number>();
  // Every first attempt streams slowly (40 deltas 250 ms apart), so the kill lands mid-answer.
  model.respond = (request) => {
    const question = lastUserText(request.messages);
    const attempt = (asked.get(question) ?? 0) + 1;
    asked.set(question, attempt);
    return attempt === 1 ? { chunks: Array.from({ length: 40 }, (_, i) => `${question}-part${i} `), chunkDelayMs: 250 } : { text: answerTo(question) };
  };
  await Promise.all([telegram.start(), model.start()]);
  const dir = temporaryDir();
  const configPath = join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    `server: { port: 0 }
data_dir: ${join(dir, 'data')}
log: { level: info }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-bench, max_retries: 0 }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`,
  );
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
