import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeOpenAI, type FakeReply, lastUserText } from '../fakes/openai/index.js';
import { FakeTelegram } from '../fakes/telegram/index.js';
import { channelStarted, type ServerProcess, startServerProcess, writeConfig } from './server-process.js';

/**
 * Issue #15: the embedded server killed (-9) in the middle of answering. Every message it had
 * accepted ends answered or told after the next start on the same data dir, in the reply the
 * person saw freeze, and none twice. Talked to only as Telegram and its users do.
 */
describe('a crash of the embedded server mid-answer', () => {
  let telegram: FakeTelegram;
  let model: FakeOpenAI;
  let config: { path: string; dir: string };
  let server: ServerProcess | undefined;
  /** How often the model was asked each question. */
  const asked = new Map<string, number>();
  /** What the model does on the n-th time it is asked a question (1-based). */
  let answerOf: (question: string, attempt: number) => FakeReply;
  /** Slow enough that the server is killed mid-answer: 40 deltas, 250 ms apart. */
  const slowly = (question: string): FakeReply => ({ chunks: Array.from({ length: 40 }, (_, i) => `${question}-slow${i} `), chunkDelayMs: 250 });

  beforeAll(async () => {
    telegram = new FakeTelegram();
    model = new FakeOpenAI({ apiKey: 'sk-e2e' });
    model.respond = (request) => {
      const question = lastUserText(request.messages);
      const attempt = (asked.get(question) ?? 0) + 1;
      asked.set(question, attempt);
      return answerOf(question, attempt);
    };
    await Promise.all([telegram.start(), model.start()]);
    config = writeConfig(`server: { port: 0 }
models:
  - { name: default, model: gpt-4o-mini, base_url: "${model.baseURL}", api_key: sk-e2e, max_retries: 0 }
channels:
  telegram: { enabled: true, bot_token: "${telegram.token}", api_root: "${telegram.apiRoot}", polling_timeout_seconds: 1 }
`);
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    await Promise.all([telegram?.stop(), model?.stop()]);
  });

  const start = async (): Promise<ServerProcess> => {
    server = await startServerProcess(['--config', config.path], { cwd: config.dir });
    await server.waitForLog(channelStarted('telegram'));
    return server;
  };

  /** Kills the server once every chat shows part of its answer. */
  const killMidAnswer = async (running: ServerProcess, chats: number[]): Promise<void> => {
    for (const chatId of chats) {
      await telegram.waitFor(() => telegram.botMessages(chatId).some((m) => m.text.includes('-slow0')), 20_000);
    }
    running.child.kill('SIGKILL');
    await running.stop();
  };

  it('answers every interrupted message after the restart, in the reply it had, each once', async () => {
    answerOf = (question, attempt) => (attempt === 1 ? slowly(question) : { text: `Answered after the crash: ${question}` });
    const chats = [8101, 8102, 8103];
    const first = await start();
    const sent = chats.map((chatId) => telegram.sendUserMessage({ chatId, chatType: 'private', text: `question ${chatId}` }));
    await killMidAnswer(first, chats);

    const restarted = await start();
    for (const [i, chatId] of chats.entries()) {
      const final = await telegram.waitFor(
        () => telegram.botMessages(chatId).find((m) => m.text === `Answered after the crash: question ${chatId}`),
        30_000,
      );
      expect(final.replyTo).toBe(sent[i]?.message_id);
      // The placeholder that froze is the message that now holds the answer: nothing else was posted.
      expect(telegram.botMessages(chatId)).toHaveLength(1);
      expect(asked.get(`question ${chatId}`)).toBe(2);
    }
    expect(await restarted.waitForLog((entry) => entry.msg === 'took up the turns the last process left unfinished')).toMatchObject({
      unfinished: 3,
      resumed: 3,
      told: 0,
    });
    // A third start has nothing left to take up.
    await restarted.stop();
    const third = await start();
    const sendsBefore = telegram.callsTo('sendMessage').length + telegram.callsTo('editMessageText').length;
    telegram.sendUserMessage({ chatId: 8104, chatType: 'private', text: '/help' });
    await telegram.waitFor(() => telegram.botMessages(8104).some((m) => m.text.includes('/new')));
    expect(third.logs.some((entry) => entry.msg === 'took up the turns the last process left unfinished')).toBe(false);
    expect(telegram.callsTo('sendMessage').length + telegram.callsTo('editMessageText').length - sendsBefore).toBe(1);
  });

  it('answers messages killed once Telegram has them confirmed, whether a worker had taken them or not', async () => {
    answerOf = (question, attempt) => (attempt === 1 ? slowly(question) : { text: `Answered after the crash: ${question}` });
    const chats = [8301, 8302, 8303];
    const first = await start();
    for (const chatId of chats) telegram.sendUserMessage({ chatId, chatType: 'private', text: `question ${chatId}` });
    // Confirmed: Telegram will not send them again. From here on they are the server's to answer.
    await telegram.waitFor(() => telegram.unconfirmedUpdates() === 0 && chats.every((chatId) => telegram.botMessages(chatId).length > 0), 20_000);
    first.child.kill('SIGKILL');
    await first.stop();

    await start();
    for (const chatId of chats) {
      const answer = `Answered after the crash: question ${chatId}`;
      const slow = `question ${chatId}-slow39 `;
      // Answered once, in the placeholder it had: by a second attempt, or by a first one that had not reached the model before the kill.
      const final = await telegram.waitFor(() => telegram.botMessages(chatId).find((m) => m.text === answer || m.text.endsWith(slow)), 30_000);
      expect(final.replyTo).toBeDefined();
      expect(telegram.botMessages(chatId)).toHaveLength(1);
      expect(asked.get(`question ${chatId}`) ?? 0).toBeLessThanOrEqual(2);
    }
  });

  it('tells the person, instead of answering, when the message brought the server down twice', async () => {
    answerOf = (question) => slowly(question);
    const chatId = 8201;
    const first = await start();
    const sent = telegram.sendUserMessage({ chatId, chatType: 'private', text: 'question 8201' });
    await killMidAnswer(first, [chatId]);
    const editsAtFirstKill = telegram.botMessages(chatId)[0]?.history.length ?? 0;
    // Taken up again at the next start, and killed again mid-answer.
    const second = await start();
    await telegram.waitFor(() => asked.get('question 8201') === 2 && (telegram.botMessages(chatId)[0]?.history.length ?? 0) > editsAtFirstKill, 20_000);
    await killMidAnswer(second, [chatId]);

    await start();
    const told = await telegram.waitFor(
      () => telegram.botMessages(chatId).find((m) => m.text === 'The server restarted before it could answer this message. Please send it again.'),
      30_000,
    );
    expect(told.replyTo).toBe(sent.message_id);
    expect(telegram.botMessages(chatId)).toHaveLength(1);
    expect(asked.get('question 8201')).toBe(2);
  });
});
