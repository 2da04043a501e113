import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastUserText, requestTokens } from '../fakes/openai/index.js';
import { answerFromRequest, CODE, isSummaryRequest, summaryOfCodes } from '../helpers/summaries.js';
import { startTelegramChat, type TelegramSetup } from './telegram-setup.js';

/**
 * A Telegram chat that outgrows its model's window, through the real server: the model refuses
 * requests over its window, as endpoints do, so a turn is answered only if the server kept its
 * request within it. What the person said first is still known at the end, through the summary.
 */

const CONTEXT_WINDOW = 8_192;
/** Eight windows' worth: the first code has to survive a summary of summaries several times over. */
const TURNS = 80;
/** ~300 tokens a message each way: the history passes the window in about ten turns. */
const PADDING = 'The quick brown fox jumps over the lazy dog while the band plays on. '.repeat(17);
const CHAT_ID = 9100;

let setup: TelegramSetup | undefined;

describe('a Telegram chat longer than its model’s window', () => {
  beforeAll(async () => {
    setup = await startTelegramChat(`context_window: ${CONTEXT_WINDOW}`);
    setup.model.respond = (request) => {
      if (requestTokens(request) > CONTEXT_WINDOW) {
        return { fail: { status: 400, message: `This model's maximum context length is ${CONTEXT_WINDOW} tokens.` } };
      }
      if (isSummaryRequest(request)) return summaryOfCodes(request);
      const asked = /What was the code for item (\d+)\?/.exec(lastUserText(request.messages));
      if (asked) return answerFromRequest(request, asked[1] as string);
      return { text: `Noted ${lastUserText(request.messages).match(CODE)?.[0] ?? 'nothing'}. ${PADDING}` };
    };
  });
  afterAll(() => setup?.stop());

  it('answers every turn, and the first turn’s code at the end, from the summary', async () => {
    const { telegram, model } = setup as TelegramSetup;
    const ask = async (text: string, answer: (reply: string) => boolean): Promise<string> => {
      const sent = telegram.sendUserMessage({ chatId: CHAT_ID, chatType: 'private', text });
      const reply = await telegram.waitFor(() => {
        const view = telegram.botMessages(CHAT_ID).find((m) => m.replyTo === sent.message_id);
        return view !== undefined && answer(view.text) ? view : undefined;
      }, 60_000);
      return reply.text;
    };
    for (let turn = 1; turn <= TURNS; turn++) {
      const reply = await ask(`Item ${turn}: remember the code K${turn}X. ${PADDING}`, (text) => text.startsWith('Noted') || text.includes('error'));
      expect(reply.startsWith(`Noted K${turn}X.`)).toBe(true);
    }
    expect(await ask('What was the code for item 1?', (text) => text.includes('item 1'))).toBe('The code for item 1 was K1X.');

    const summaries = model.requests.filter(isSummaryRequest);
    expect(summaries.length).toBeGreaterThan(5);
    expect(summaries.length).toBeLessThan(TURNS / 4);
    expect(Math.max(...model.requests.map(requestTokens))).toBeLessThanOrEqual(CONTEXT_WINDOW * 0.75);
    // The summary never reached the chat.
    expect(telegram.botMessages(CHAT_ID).some((m) => m.history.some((text) => text.includes('Codes the person gave')))).toBe(false);
    expect(telegram.rateLimitViolations).toEqual([]);
  }, 600_000);
});
