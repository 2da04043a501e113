import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeChatRequest } from '../fakes/openai/index.js';
import { startTelegramChat, type TelegramSetup } from './telegram-setup.js';

/**
 * Custom agents chosen and made from a Telegram chat, through the real server: `/agent` lists and
 * switches, the chosen agent's persona answers, `/bootstrap` saves a new agent that its creator
 * can then choose.
 */

const CHAT_ID = 9600;
const SUPPORT_SOUL = 'You are the support desk of Acme. Answer product questions politely.';
const REVIEWER_SOUL = 'You are a strict SQL reviewer.';

let setup: TelegramSetup | undefined;
let agentsDir: string;

describe('agents chosen and made from a Telegram chat', () => {
  beforeAll(async () => {
    agentsDir = mkdtempSync(join(tmpdir(), 'dfc-e2e-agents-'));
    cpSync(fileURLToPath(new URL('../../agents', import.meta.url)), agentsDir, { recursive: true });
    mkdirSync(join(agentsDir, 'support'));
    writeFileSync(join(agentsDir, 'support', 'SOUL.md'), SUPPORT_SOUL);
    writeFileSync(join(agentsDir, 'support', 'config.yaml'), 'description: Answers product questions\nchat: { enabled: true }\n');
    // The sender is listed in allowed_users: a trusted sender, who may set up agents.
    setup = await startTelegramChat('', `agents: { dir: ${JSON.stringify(agentsDir)} }\n`, {}, `allowed_users: [${CHAT_ID}]`);
  });
  afterAll(async () => {
    await setup?.stop();
    if (agentsDir) rmSync(agentsDir, { recursive: true, force: true });
  });

  /** Sends `text` and resolves with the bot's final reply to it. */
  async function say(text: string, expected: (reply: string) => boolean): Promise<string> {
    const { telegram } = setup as TelegramSetup;
    const sent = telegram.sendUserMessage({ chatId: CHAT_ID, chatType: 'private', text });
    const reply = await telegram.waitFor(() => {
      const found = telegram.botMessages(CHAT_ID).find((m) => m.replyTo === sent.message_id && expected(m.text));
      return found?.text;
    }, 60_000);
    return reply;
  }

  it('switches to a shared agent, sets up a new one, and lists it for its creator', async () => {
    const { model } = setup as TelegramSetup;
    const list = await say('/agent', (text) => text.startsWith('Current agent'));
    expect(list).toContain('• support — Answers product questions');
    expect(list).not.toContain('triage');

    expect(await say('/agent support', (text) => text.startsWith('Now talking'))).toBe('Now talking to support (Answers product questions). New conversation started.');
    model.enqueue({ text: 'Happy to help with Acme.' });
    await say('Hi there', (text) => text === 'Happy to help with Acme.');
    expect(String((model.requests.at(-1) as FakeChatRequest).messages[0]?.content)).toContain(SUPPORT_SOUL);

    model.enqueue(
      { toolCalls: [{ name: 'setup_agent', args: { name: 'sql-reviewer', description: 'Reviews SQL', soul: REVIEWER_SOUL } }] },
      { text: 'Saved. Talk to it with /agent sql-reviewer.' },
    );
    await say('/bootstrap I need a SQL reviewer', (text) => text === 'Saved. Talk to it with /agent sql-reviewer.');
    expect(readFileSync(join(agentsDir, 'sql-reviewer', 'SOUL.md'), 'utf8')).toBe(`${REVIEWER_SOUL}\n`);
    expect(existsSync(join(agentsDir, 'sql-reviewer', 'config.yaml'))).toBe(true);

    expect(await say('/agent', (text) => text.startsWith('Current agent'))).toContain('• sql-reviewer — Reviews SQL');
    await say('/agent sql-reviewer', (text) => text.startsWith('Now talking'));
    model.enqueue({ text: 'Add an index.' });
    await say('Review: SELECT * FROM orders WHERE customer_id = 7', (text) => text === 'Add an index.');
    const prompt = String((model.requests.at(-1) as FakeChatRequest).messages[0]?.content);
    expect(prompt).toContain(REVIEWER_SOUL);
    expect(prompt).not.toContain('<agent_setup>');
  }, 120_000);
});
