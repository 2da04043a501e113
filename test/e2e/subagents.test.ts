import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeChatRequest, type FakeReply, messageText } from '../fakes/openai/index.js';
import { Waiters } from '../fakes/waiters.js';
import { startTelegramChat, type TelegramSetup } from './telegram-setup.js';

/**
 * Helpers (the `task` tool) through the real server and Telegram: while two helpers work, the
 * reply being written shows one status line naming both; the final answer is the agent's alone.
 */

const CHAT_ID = 9500;
const ANSWER = 'Fly on TP 555 for 89 EUR and stay at Hotel Rio.';

let setup: TelegramSetup | undefined;

function isHelperRequest(request: FakeChatRequest): boolean {
  return messageText(request.messages[0] ?? { role: 'system', content: '' }).startsWith('You are a helper');
}

describe('helpers, from a Telegram chat', () => {
  beforeAll(async () => {
    setup = await startTelegramChat();
  });
  afterAll(async () => {
    await setup?.stop();
  });

  it('shows the helpers’ progress as one status line while they work, then the answer alone', async () => {
    const { telegram, model } = setup as TelegramSetup;
    const released = { value: false };
    const gate = new Waiters('helpers gate', { pollMs: 20 });
    model.respond = async (request): Promise<FakeReply> => {
      if (!isHelperRequest(request)) {
        if (request.messages.some((message) => message.role === 'tool')) return { text: ANSWER };
        return {
          toolCalls: [
            { name: 'task', args: { description: 'Check flights', prompt: 'Find the cheapest flight from Berlin to Lisbon on 12 January.' } },
            { name: 'task', args: { description: 'Check hotels', prompt: 'Find a hotel in Lisbon for 12–15 January.' } },
          ],
        };
      }
      await gate.waitFor(() => released.value, 60_000);
      return { text: 'Report: found one.' };
    };

    const sent = telegram.sendUserMessage({ chatId: CHAT_ID, chatType: 'private', text: 'Plan my Lisbon trip.' });
    const reply = () => telegram.botMessages(CHAT_ID).find((message) => message.replyTo === sent.message_id);
    await telegram.waitFor(() => reply()?.history.some((text) => text.includes('Helpers: ⏳ Check flights · ⏳ Check hotels')), 60_000);
    released.value = true;
    await telegram.waitFor(() => reply()?.text === ANSWER, 60_000);
    expect(reply()?.history.some((text) => text.includes('Report: found one.'))).toBe(false);
  }, 120_000);
});
