import { afterEach, describe, expect, it } from 'vitest';
import { telegramChannel } from '../../../channels/telegram/index.js';
import type { InboundMessage } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeTelegram, type UserMessageInput } from '../../fakes/telegram/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/**
 * Issue #20 on Telegram, end to end through grammY and FakeTelegram: what a person types is what
 * the intake reads, and the agent's Markdown shows as Telegram renders it (the fake parses the
 * HTML the way the Bot API does and refuses what the Bot API refuses).
 */

const PRIVATE = 777;
const GROUP = -1001234567890;
const CANT_PARSE = "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startTelegram() {
  const fake = new FakeTelegram();
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const config = telegramChannel.configSchema.parse({ enabled: true, bot_token: fake.token, api_root: fake.apiRoot, polling_timeout_seconds: 1 });
  const adapter = await telegramChannel.create(config, testChannelDeps({ intake, commands: [{ name: 'new', description: 'New' }], logger: silentLogger() }));
  cleanups.push(() => adapter.stop());
  await adapter.start();
  return { fake, intake, adapter };
}

/** A person writes; resolves with what reached the intake and a reply to it. */
async function written(input: Omit<UserMessageInput, 'chatType'>) {
  const started = await startTelegram();
  started.fake.sendUserMessage({ chatType: input.chatId < 0 ? 'supergroup' : 'private', ...input });
  const [inbound] = await started.intake.waitForCommits(1);
  if (!inbound) throw new Error('no inbound message');
  const target = { chatId: inbound.chatId, topicId: inbound.topicId, isPrivateChat: inbound.isPrivateChat, replyTo: inbound.replyTo };
  return { ...started, inbound: inbound as InboundMessage, reply: started.adapter.egress.reply(target) };
}

describe('Telegram text in: the intake reads what the person meant', () => {
  it('drops the @bot a group message starts with, and writes out labelled links and mentions of people without a username', async () => {
    // As the app sends it: the name and the link label are text, what they stand for is in the entities.
    const text = '@test_bot 🚀 ask Bob Ray about the docs';
    const { inbound } = await written({
      chatId: GROUP,
      text,
      entities: [
        { type: 'text_mention', offset: 17, length: 7, user: { id: 51, is_bot: false, first_name: 'Bob', last_name: 'Ray' } },
        { type: 'text_link', offset: 31, length: 8, url: 'https://example.com/a_b?x=1&y=2' },
      ],
    });
    expect(inbound.text).toBe('🚀 ask @Bob Ray about the docs (https://example.com/a_b?x=1&y=2)');
  });
});

describe('Telegram text out: the agent’s Markdown as Telegram shows it', () => {
  it('renders the final once into HTML: formatting as entities, links native, markup characters as typed', async () => {
    const { fake, inbound, reply } = await written({ chatId: PRIVATE, text: 'question' });
    await reply.finish('**Note**: `a < b` && see [the docs](https://example.com/a_b?x=1&y=2) — 5 * 3 > 2_000');
    const [message] = fake.botMessages(PRIVATE);
    expect(String(message?.messageId)).toBe(inbound.replyTo.placeholderId);
    expect(message?.display).toEqual({
      shown: 'Note: a < b && see the docs — 5 * 3 > 2_000',
      links: [{ text: 'the docs', url: 'https://example.com/a_b?x=1&y=2' }],
    });
    expect(message?.entities.map((e) => e.type)).toEqual(['bold', 'code', 'text_link']);
    expect(fake.callsTo('editMessageText').map((call) => call.params.parse_mode)).toEqual(['HTML']);
  });

  it('streams partials through the same renderer: half-written markup never shows broken', async () => {
    const { fake, inbound, reply } = await written({ chatId: PRIVATE, text: 'question' });
    reply.update('**Step one**\n\n```js\nconst a = 1 <');
    const placeholder = () => fake.botMessages(PRIVATE).find((m) => String(m.messageId) === inbound.replyTo.placeholderId);
    await fake.waitFor(() => placeholder()?.history.length === 2);
    expect(placeholder()?.display.shown).toBe('Step one\n\nconst a = 1 <');
    expect(placeholder()?.entities.map((e) => e.type)).toEqual(['bold', 'pre']);
    await reply.finish('**Step one** done.');
    expect(placeholder()?.history.slice(1)).toEqual(['Step one\n\nconst a = 1 <', 'Step one done.']);
    expect(fake.calls.filter((call) => call.response?.ok === false)).toEqual([]);
  });

  it('sends a part as plain text when Telegram still refuses its HTML, so the answer arrives', async () => {
    const { fake, inbound, reply } = await written({ chatId: PRIVATE, text: 'question' });
    fake.failNext('editMessageText', { errorCode: 400, description: CANT_PARSE });
    await reply.finish('**bold** & <tags>');
    const messages = fake.botMessages(PRIVATE);
    expect(messages.map((m) => [String(m.messageId), m.text, m.entities])).toEqual([[inbound.replyTo.placeholderId, 'bold & <tags>', []]]);
    const edits = fake.callsTo('editMessageText');
    expect(edits.map((call) => [call.params.parse_mode, call.response?.ok])).toEqual([
      ['HTML', false],
      [undefined, true],
    ]);
  });

  it('splits a long code block into messages that each show code and fit, each replying to the one before', async () => {
    const { fake, reply } = await written({ chatId: PRIVATE, text: 'question' });
    const lines = Array.from({ length: 700 }, (_, i) => `echo "${i}" && test ${i} -lt 5 > /dev/null`);
    await reply.finish(`Here:\n\n\`\`\`sh\n${lines.join('\n')}\n\`\`\``);
    const messages = fake.botMessages(PRIVATE);
    expect(messages.length).toBeGreaterThan(2);
    expect(messages.filter((m) => m.text.length > 4096)).toEqual([]);
    expect(messages.slice(1).map((m, i) => m.replyTo === messages[i]?.messageId)).toEqual(messages.slice(1).map(() => true));
    const code = messages.filter((m) => m.entities.some((e) => e.type === 'pre' && e.offset === 0 && e.length === m.text.length));
    expect(code.map((m) => m.text).join('\n')).toBe(lines.join('\n'));
  });

  it('after a part fails, leaves the Markdown of the parts not shown, to continue after the last part shown', async () => {
    const { fake, inbound, reply } = await written({ chatId: PRIVATE, text: 'question' });
    const paragraphs = ['a', 'b', 'c'].map((letter) => `**${letter}** ${letter.repeat(3000)}`);
    fake.failNext('sendMessage', { errorCode: 403, description: 'Forbidden: bot was blocked by the user' });
    await expect(reply.finish(paragraphs.join('\n\n'))).rejects.toMatchObject({ code: 'CHANNEL_REJECTED' });
    expect(fake.botMessages(PRIVATE).map((m) => m.text)).toEqual([`a ${'a'.repeat(3000)}`]);
    const left = reply.finalLeft?.();
    expect(left?.anchor).toEqual({ messageId: inbound.replyTo.placeholderId });
    expect(left?.text.trim()).toBe(`${paragraphs[1]}\n\n${paragraphs[2]}`);
  });

  it('counts an edit that would show the same text and formatting as delivered ("message is not modified")', async () => {
    const { fake, inbound, reply } = await written({ chatId: PRIVATE, text: 'question' });
    reply.update('**done**');
    const placeholder = () => fake.botMessages(PRIVATE).find((m) => String(m.messageId) === inbound.replyTo.placeholderId);
    await fake.waitFor(() => placeholder()?.history.length === 2);
    // Other Markdown, the same message: Telegram answers "message is not modified".
    await reply.finish('__done__');
    expect(placeholder()?.history).toEqual(['Working on it...', 'done']);
    expect(fake.callsTo('editMessageText').map((call) => call.response?.ok)).toEqual([true, false]);
  });
});
