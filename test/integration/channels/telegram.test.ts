import { afterEach, describe, expect, it, vi } from 'vitest';
import { telegramChannel } from '../../../channels/telegram/index.js';
import type { InboundMessage, ReplyTarget } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { type ChatMessageView, FakeTelegram, type FakeTelegramOptions } from '../../fakes/telegram/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/**
 * The real grammY adapter against FakeTelegram. Assertions read what the user sees in the fake
 * chat and what reached the intake.
 */

const COMMANDS = ['bootstrap', 'goal', 'new', 'status', 'models', 'memory', 'help'].map((name) => ({ name, description: `The ${name} command` }));
const WORKING = 'Working on it...';
const WELCOME = 'Welcome to DeerFlow! Send me a message to start a conversation.\nType /help for available commands.';
const PRIVATE = 777;
const GROUP = -1001234567890;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startTelegram(config: Record<string, unknown> = {}, fakeOptions: FakeTelegramOptions = {}) {
  const fake = new FakeTelegram(fakeOptions);
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const parsed = telegramChannel.configSchema.parse({
    enabled: true,
    bot_token: fake.token,
    api_root: `${fake.apiRoot}/`,
    polling_timeout_seconds: 1,
    ...config,
  });
  const adapter = await telegramChannel.create(parsed, testChannelDeps({ intake, commands: COMMANDS, logger: silentLogger() }));
  cleanups.push(() => adapter.stop());
  return { fake, intake, adapter };
}

async function startRunning(config: Record<string, unknown> = {}) {
  const started = await startTelegram(config);
  await started.adapter.start();
  return started;
}

function targetOf(message: InboundMessage): ReplyTarget {
  return { chatId: message.chatId, topicId: message.topicId, isPrivateChat: message.isPrivateChat, replyTo: message.replyTo };
}

function gaps(times: number[]): number[] {
  return times.slice(1).map((time, i) => time - (times[i] as number));
}

function botMessage(fake: FakeTelegram, chatId: number, messageId: string | undefined): ChatMessageView | undefined {
  return fake.botMessages(chatId).find((m) => String(m.messageId) === messageId);
}

describe('Telegram ingress', () => {
  it('answers a chat message with a placeholder replying to it, then hands it to the intake', async () => {
    const { fake, intake, adapter } = await startRunning();
    expect(adapter.status()).toEqual({ running: true });
    const sent = fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'hello' });
    const [inbound] = await intake.waitForCommits(1);
    const [placeholder] = fake.botMessages(PRIVATE);
    expect(placeholder).toMatchObject({ text: WORKING, replyTo: sent.message_id });
    expect(inbound).toEqual({
      channel: 'telegram',
      chatId: String(PRIVATE),
      topicId: undefined,
      userId: String(PRIVATE),
      senderIsAllowlisted: false,
      workspaceId: String(PRIVATE),
      messageId: String(sent.message_id),
      text: 'hello',
      kind: 'chat',
      isPrivateChat: true,
      replyTo: { messageId: String(sent.message_id), placeholderId: String(placeholder?.messageId) },
      receivedAt: expect.any(Number),
    });
  });

  it('takes the caption of a photo when there is no text', async () => {
    const { fake, intake } = await startRunning();
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', caption: 'what is in this picture?' });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound?.text).toBe('what is in this picture?');
  });

  it('ignores other bots and its own messages', async () => {
    const { fake, intake } = await startRunning();
    fake.sendUserMessage({ chatId: GROUP, chatType: 'supergroup', text: 'beep', isBot: true });
    fake.sendUserMessage({
      chatId: GROUP,
      chatType: 'supergroup',
      text: 'echo of myself',
      from: { id: fake.botInfo.id, is_bot: true, username: 'test_bot' },
    });
    fake.sendUserMessage({ chatId: GROUP, chatType: 'supergroup', text: 'a person' });
    await intake.waitForCommits(1);
    expect(intake.committed.map((m) => m.text)).toEqual(['a person']);
    expect(fake.botMessages(GROUP)).toHaveLength(1);
  });

  it('serves only allowed_users when the list is set (numbers or numeric strings)', async () => {
    const { fake, intake } = await startRunning({ allowed_users: ['42', 7] });
    fake.sendUserMessage({ chatId: 43, chatType: 'private', text: 'let me in' });
    fake.sendUserMessage({ chatId: 42, chatType: 'private', text: 'hi, it is me' });
    await intake.waitForCommits(1);
    expect(intake.committed.map((m) => [m.userId, m.senderIsAllowlisted])).toEqual([['42', true]]);
    expect(fake.botMessages(43)).toEqual([]);
  });

  it('normalizes /cmd@test_bot, ignores commands for other bots, treats unknown slash words as chat', async () => {
    const { fake, intake } = await startRunning();
    fake.sendUserMessage({ chatId: GROUP, chatType: 'supergroup', text: '/new@other_bot' });
    const command = fake.sendUserMessage({ chatId: GROUP, chatType: 'supergroup', text: '/new@Test_Bot fresh start' });
    const chat = fake.sendUserMessage({ chatId: GROUP, chatType: 'supergroup', text: '/unknown thing' });
    await intake.waitForCommits(2);
    expect(intake.committed.map((m) => [m.kind, m.text, m.replyTo.placeholderId !== undefined])).toEqual([
      ['command', '/new fresh start', false],
      ['chat', '/unknown thing', true],
    ]);
    expect(intake.committed[0]?.replyTo).toEqual({ messageId: String(command.message_id) });
    expect(fake.botMessages(GROUP).map((m) => m.replyTo)).toEqual([chat.message_id]);
  });

  it('welcomes /start without forwarding it', async () => {
    const { fake, intake } = await startRunning();
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: '/start' });
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'first question' });
    await intake.waitForCommits(1);
    expect(intake.committed.map((m) => m.text)).toEqual(['first question']);
    expect(fake.botMessages(PRIVATE).map((m) => m.text)).toEqual([WELCOME, WORKING]);
  });

  it('keys group conversations by the replied-to message, private chats by the chat', async () => {
    const { fake, intake } = await startRunning();
    const top = fake.sendUserMessage({ chatId: GROUP, chatType: 'supergroup', text: 'new topic' });
    await intake.waitForCommits(1);
    const placeholderId = Number(intake.committed[0]?.replyTo.placeholderId);
    fake.sendUserMessage({ chatId: GROUP, chatType: 'supergroup', text: 'follow-up', replyToMessageId: top.message_id });
    fake.sendUserMessage({ chatId: GROUP, chatType: 'supergroup', text: 'to the bot', replyToMessageId: placeholderId });
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'dm', replyToMessageId: 1 });
    await intake.waitForCommits(4);
    // Chats are acknowledged independently, so only the group's order is fixed.
    const groupFirst = [...intake.committed].sort((a, b) => Number(a.isPrivateChat) - Number(b.isPrivateChat));
    expect(groupFirst.map((m) => [m.text, m.topicId, m.isPrivateChat, m.workspaceId])).toEqual([
      ['new topic', String(top.message_id), false, String(GROUP)],
      ['follow-up', String(top.message_id), false, String(GROUP)],
      ['to the bot', String(placeholderId), false, String(GROUP)],
      ['dm', undefined, true, String(PRIVATE)],
    ]);
  });

  it('sends no placeholder while the intake is full, and leaves the message with Telegram until there is room', async () => {
    const { fake, intake } = await startRunning();
    intake.isFull = true;
    const refused = fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'refused' });
    const other = fake.sendUserMessage({ chatId: PRIVATE + 1, chatType: 'private', text: 'also refused' });
    await intake.waitUntil(() => intake.refused >= 2);
    // Not confirmed: Telegram offers both again at every poll, and nothing reaches the chats.
    await intake.waitUntil(() => intake.refused >= 4);
    expect(fake.unconfirmedUpdates()).toBeGreaterThanOrEqual(2);
    expect(fake.botMessages(PRIVATE)).toEqual([]);
    intake.isFull = false;
    const kept = fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'kept' });
    await intake.waitForCommits(3);
    expect(intake.committed.map((m) => m.text).sort()).toEqual(['also refused', 'kept', 'refused']);
    expect(fake.botMessages(PRIVATE).map((m) => m.replyTo)).toEqual([refused.message_id, kept.message_id]);
    expect(fake.botMessages(PRIVATE + 1).map((m) => m.replyTo)).toEqual([other.message_id]);
    await fake.waitFor(() => fake.unconfirmedUpdates() === 0);
  });

  it("keeps a chat's order when one of its messages is refused: the later ones wait and come again after it", async () => {
    const { fake, intake } = await startRunning();
    refuseFirstReserve(intake);
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'one' });
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'two' });
    await intake.waitForCommits(2);
    expect(intake.committed.map((m) => m.text)).toEqual(['one', 'two']);
  });

  it('takes a message once though Telegram offers it again after an earlier one was refused', async () => {
    const { fake, intake } = await startRunning();
    // The first reserve of the batch is refused, the second taken: the poll asks from the first again, and gets both.
    refuseFirstReserve(intake);
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'first' });
    fake.sendUserMessage({ chatId: PRIVATE + 1, chatType: 'private', text: 'second' });
    await intake.waitForCommits(2);
    await fake.waitFor(() => fake.unconfirmedUpdates() === 0);
    expect(intake.committed.map((m) => m.text).sort()).toEqual(['first', 'second']);
    expect(fake.botMessages(PRIVATE + 1)).toHaveLength(1);
  });

  it('accepts and handles a 64 KB message', async () => {
    const { fake, intake } = await startRunning();
    const text = `${'λ'.repeat(32 * 1024)}${'x'.repeat(32 * 1024)}`;
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound?.text).toBe(text);
    expect(fake.botMessages(PRIVATE).map((m) => m.text)).toEqual([WORKING]);
  });

  it('lets acknowledgements in flight finish before stop() resolves', async () => {
    const { fake, intake, adapter } = await startRunning();
    let open: () => void = () => undefined;
    intake.gate = new Promise((resolve) => {
      open = resolve;
    });
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'just in time' });
    await intake.waitUntil(() => intake.reserved === 1);
    const stopping = adapter.stop();
    open();
    await stopping;
    expect(intake.committed.map((m) => m.text)).toEqual(['just in time']);
    expect(adapter.status().running).toBe(false);
  });
});

describe('Telegram start and status', () => {
  it("lists core's commands in Telegram's command menu", async () => {
    const { fake } = await startRunning();
    expect(fake.commands).toEqual(COMMANDS.map(({ name, description }) => ({ command: name, description })));
  });

  it('starts even when Telegram refuses the command menu', async () => {
    const { fake, adapter } = await startTelegram();
    fake.failNext('setMyCommands', { errorCode: 400, description: 'Bad Request: BOT_COMMAND_INVALID' });
    await adapter.start();
    expect(adapter.status()).toEqual({ running: true });
  });

  it('rejects start() with CHANNEL_UNAUTHORIZED on a 401 and reports why, without polling', async () => {
    const { fake, adapter } = await startTelegram({}, { rejectToken: true });
    await expect(adapter.start()).rejects.toMatchObject({ name: 'ChannelError', code: 'CHANNEL_UNAUTHORIZED' });
    expect(adapter.status()).toEqual({ running: false, reason: 'Telegram rejected the bot token (401 Unauthorized)' });
    expect(fake.callsTo('getUpdates')).toEqual([]);
    expect(adapter.status().reason).not.toContain(fake.token);
  });

  it('reports not running when polling dies later', async () => {
    const { fake, adapter } = await startRunning();
    fake.failNext('getUpdates', { errorCode: 401 });
    await vi.waitFor(() => expect(adapter.status().running).toBe(false), { timeout: 5000, interval: 20 });
    expect(adapter.status().reason).toBe('Telegram rejected the bot token (401 Unauthorized)');
  });
});

describe('Telegram egress', () => {
  async function acknowledged(chatId: number, chatType: 'private' | 'supergroup', text = 'question') {
    const started = await startRunning();
    started.fake.sendUserMessage({ chatId, chatType, text });
    const [inbound] = await started.intake.waitForCommits(1);
    if (!inbound) throw new Error('no inbound message');
    const reply = started.adapter.egress.reply(targetOf(inbound));
    return { ...started, inbound, reply };
  }

  it('streams edits into the placeholder at most once a second in a private chat, then the final', async () => {
    const { fake, inbound, reply } = await acknowledged(PRIVATE, 'private');
    const placeholder = () => botMessage(fake, PRIVATE, inbound.replyTo.placeholderId);
    reply.update('Thinking');
    await fake.waitFor(() => placeholder()?.history.length === 2);
    reply.update('Thinking harder');
    reply.update('Thinking harder still');
    await fake.waitFor(() => placeholder()?.history.length === 3);
    await reply.finish('Done.');
    expect(placeholder()?.history).toEqual([WORKING, 'Thinking', 'Thinking harder still', 'Done.']);
    expect(fake.botMessages(PRIVATE)).toHaveLength(1);
    // Partials are spaced; the final goes out at once.
    const [partialGap] = gaps(placeholder()?.editedAt ?? []);
    expect(partialGap).toBeGreaterThanOrEqual(1000);
  });

  it('spaces group edits at least 3 s apart, and delivers the final without waiting', async () => {
    const { fake, inbound, reply } = await acknowledged(GROUP, 'supergroup');
    const placeholder = () => botMessage(fake, GROUP, inbound.replyTo.placeholderId);
    reply.update('partial');
    await fake.waitFor(() => placeholder()?.history.length === 2);
    reply.update('partial, more');
    await fake.waitFor(() => placeholder()?.history.length === 3);
    await reply.finish('final');
    expect(placeholder()?.history).toEqual([WORKING, 'partial', 'partial, more', 'final']);
    const [partialGap, finalGap] = gaps(placeholder()?.editedAt ?? []);
    expect(partialGap).toBeGreaterThanOrEqual(3000);
    expect(finalGap).toBeLessThan(3000);
  });

  it('splits a 5,000-character final into two messages between its paragraphs, the second replying to the first', async () => {
    const { fake, inbound, reply } = await acknowledged(PRIVATE, 'private');
    const text = `${'a'.repeat(3000)}\n\n${'b'.repeat(1998)}`;
    await reply.finish(text);
    const messages = fake.botMessages(PRIVATE);
    expect(messages.map((m) => m.text)).toEqual(['a'.repeat(3000), 'b'.repeat(1998)]);
    expect(String(messages[0]?.messageId)).toBe(inbound.replyTo.placeholderId);
    expect(messages[1]?.replyTo).toBe(messages[0]?.messageId);
    expect(messages.every((m) => m.text.length <= 4096)).toBe(true);
  });

  it('posts a command reply as a reply to the command', async () => {
    const { fake, inbound, reply } = await acknowledged(PRIVATE, 'private', '/status');
    expect(inbound.kind).toBe('command');
    await reply.finish('No active conversation.');
    expect(fake.botMessages(PRIVATE).map((m) => [m.text, m.replyTo])).toEqual([
      ['No active conversation.', Number(inbound.messageId)],
    ]);
  });

  it('on a 429 (retry_after 2 s, longer than the edit spacing) drops partials, waits it out, delivers the final', async () => {
    const { fake, inbound, reply } = await acknowledged(PRIVATE, 'private');
    fake.failNext('editMessageText', { errorCode: 429, retryAfter: 2 });
    reply.update('partial one');
    const limited = await fake.waitFor(() => fake.callsTo('editMessageText').find((c) => c.response?.ok === false));
    reply.update('partial two');
    await reply.finish('final answer');
    const placeholder = botMessage(fake, PRIVATE, inbound.replyTo.placeholderId);
    expect(placeholder?.history).toEqual([WORKING, 'final answer']);
    expect(fake.rateLimitViolations).toEqual([]);
    expect(placeholder?.editedAt[0]).toBeGreaterThanOrEqual(limited.at + 2000);
  });

  it('counts a final identical to the message as delivered ("message is not modified")', async () => {
    const { fake, inbound, reply } = await acknowledged(PRIVATE, 'private');
    await reply.finish(WORKING);
    const edits = fake.callsTo('editMessageText');
    expect(edits.map((c) => c.response)).toEqual([
      { ok: false, errorCode: 400, description: expect.stringContaining('message is not modified') },
    ]);
    expect(fake.botMessages(PRIVATE).map((m) => String(m.messageId))).toEqual([inbound.replyTo.placeholderId]);
  });

  it('posts the final as a new message when the placeholder cannot be edited, and removes the stale placeholder', async () => {
    const { fake, inbound, reply } = await acknowledged(PRIVATE, 'private');
    fake.failNext('editMessageText', { errorCode: 400, description: 'Bad Request: message to edit not found' });
    await reply.finish('here you go');
    expect(fake.botMessages(PRIVATE).map((m) => [m.text, m.replyTo])).toEqual([['here you go', Number(inbound.messageId)]]);
  });


  it('rejects finish() at once when Telegram cannot be reached, so the outbox takes the final over instead of a worker waiting', async () => {
    const { fake, reply } = await acknowledged(PRIVATE, 'private');
    fake.failNext('editMessageText', { errorCode: 'unreachable' }, 1000);
    fake.failNext('sendMessage', { errorCode: 'unreachable' }, 1000);
    await expect(reply.finish('anyone there?')).rejects.toMatchObject({ name: 'ChannelError', code: 'CHANNEL_UNAVAILABLE', platform: 'telegram' });
  });

  it('rejects finish() with a ChannelError when Telegram refuses the text', async () => {
    const { fake, reply } = await acknowledged(PRIVATE, 'private');
    fake.failNext('editMessageText', { errorCode: 403, description: 'Forbidden: bot was blocked by the user' });
    fake.failNext('sendMessage', { errorCode: 403, description: 'Forbidden: bot was blocked by the user' });
    await expect(reply.finish('anyone there?')).rejects.toMatchObject({
      name: 'ChannelError',
      code: 'CHANNEL_REJECTED',
      platform: 'telegram',
    });
  });
});

describe('FakeTelegram speaks the Bot API wire format', () => {
  async function started() {
    const fake = new FakeTelegram();
    await fake.start();
    cleanups.push(() => fake.stop());
    const call = async (method: string, body?: RequestInit['body'], token = fake.token) => {
      const response = await fetch(`${fake.apiRoot}/bot${token}/${method}`, { method: 'POST', body });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const json = (value: unknown) => new Blob([JSON.stringify(value)], { type: 'application/json' });
    return { fake, call, json };
  }

  it('answers unknown methods 404 and wrong tokens 401', async () => {
    const { call } = await started();
    expect(await call('sendPigeon')).toEqual({
      status: 404,
      body: { ok: false, error_code: 404, description: 'Not Found' },
    });
    expect(await call('getMe', undefined, '1:wrong')).toEqual({
      status: 401,
      body: { ok: false, error_code: 401, description: 'Unauthorized' },
    });
  });

  it('validates text like Telegram, whatever the body encoding', async () => {
    const { fake, call, json } = await started();
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'hi' });
    const form = (fields: Record<string, string>) => {
      const data = new FormData();
      for (const [key, value] of Object.entries(fields)) data.set(key, value);
      return data;
    };
    const description = async (method: string, body: RequestInit['body']) => (await call(method, body)).body.description;
    expect(await description('sendMessage', new URLSearchParams({ chat_id: '1', text: 'x' }))).toBe(
      'Bad Request: chat not found',
    );
    expect(await description('sendMessage', new URLSearchParams({ chat_id: String(PRIVATE), text: ' ' }))).toBe(
      'Bad Request: message text is empty',
    );
    expect(await description('sendMessage', form({ chat_id: String(PRIVATE), text: 'x'.repeat(4097) }))).toBe(
      'Bad Request: message is too long',
    );
    const ok = await call('sendMessage', form({ chat_id: String(PRIVATE), text: 'x'.repeat(4096) }));
    const sent = (ok.body.result as { message_id: number }).message_id;
    expect(await description('editMessageText', json({ chat_id: PRIVATE, message_id: sent, text: 'x'.repeat(4096) }))).toBe(
      'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
    );
    expect(await description('editMessageText', json({ chat_id: PRIVATE, message_id: 999, text: 'y' }))).toBe(
      'Bad Request: message to edit not found',
    );
  });

  it('holds getUpdates until an update arrives and forgets confirmed ones', async () => {
    const { fake, call, json } = await started();
    const polling = call('getUpdates', json({ offset: 0, timeout: 5 }));
    await fake.waitFor(() => fake.callsTo('getUpdates').length === 1);
    const sent = fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'wake up' });
    const first = (await polling).body.result as { update_id: number; message: { message_id: number } }[];
    expect(first.map((u) => u.message.message_id)).toEqual([sent.message_id]);
    const again = await call('getUpdates', json({ offset: first[0]!.update_id }));
    expect((again.body.result as unknown[]).length).toBe(1);
    const confirmed = await call('getUpdates', json({ offset: first[0]!.update_id + 1 }));
    expect(confirmed.body.result).toEqual([]);
  });

  it('injects faults with retry_after and records early sends to a limited chat', async () => {
    const { fake, call, json } = await started();
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'hi' });
    fake.failNext('sendMessage', { errorCode: 429, retryAfter: 3 });
    expect((await call('sendMessage', json({ chat_id: PRIVATE, text: 'a' }))).body).toEqual({
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 3',
      parameters: { retry_after: 3 },
    });
    expect((await call('sendMessage', json({ chat_id: PRIVATE, text: 'b' }))).body.ok).toBe(true);
    expect(fake.rateLimitViolations).toMatchObject([{ method: 'sendMessage', chatId: PRIVATE }]);
  });
});

/** Makes the intake refuse its first reservation and take every later one. */
function refuseFirstReserve(intake: RecordingIntake): void {
  let reserves = 0;
  const reserve = intake.reserve.bind(intake);
  intake.reserve = async () => {
    reserves++;
    intake.isFull = reserves === 1;
    return reserve();
  };
}
