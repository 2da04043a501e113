import { afterEach, describe, expect, it } from 'vitest';
import { INGRESS_TEXTS } from '../../../src/channel/ingress/pipeline.js';
import { ChannelError } from '../../../src/errors.js';
import { ALICE, BOB, startDiscordChannel, targetOf } from '../../fakes/discord/harness.js';
import { FakeDiscord } from '../../fakes/discord/index.js';

/**
 * The real discord.js adapter against FakeDiscord: routing (mention_only, thread_mode, allow
 * lists), acknowledgements and odd messages. Assertions read the fake chat and the intake.
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const OTHER_GUILD = '3999999999999999999';

describe('Discord ingress', () => {
  it('acknowledges a server message with 👀 and the typing indicator, and replies without pinging anyone', async () => {
    const { fake, intake, adapter } = await startDiscordChannel(cleanups);
    expect(adapter.status()).toEqual({ running: true });
    fake.dmChannelId(BOB); // Bob is a user the fake knows, so the event's `mentions` carries him.
    const sent = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: 'hello <@700000000000000002>' });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound).toMatchObject({
      channel: 'discord',
      chatId: fake.channelIds.general,
      topicId: sent.id,
      userId: ALICE.id,
      workspaceId: fake.guildId,
      messageId: sent.id,
      text: 'hello @bob',
      kind: 'chat',
      isPrivateChat: false,
      replyTo: { messageId: sent.id },
    });
    await fake.waitFor(() => fake.reactions.length > 0 && fake.typing.length > 0);
    expect(fake.reactions).toEqual([{ channelId: fake.channelIds.general, messageId: sent.id, emoji: '👀', at: expect.any(Number) }]);
    expect(fake.typing.map((t) => t.channelId)).toEqual([fake.channelIds.general]);
    await adapter.egress.reply(targetOf(inbound as never)).finish('hi <@700000000000000002> and @everyone');
    const [answer] = fake.botMessages(fake.channelIds.general);
    expect(answer).toMatchObject({ replyTo: sent.id, pings: { users: [], roles: [], everyone: false, repliedUser: false } });
    // The echoed mention shows as the characters written, not as Bob's name.
    expect(answer && fake.display(answer).shown).toBe('hi <@700000000000000002> and @everyone');
  });

  it('reads mentions of people, roles and channels by their names from the event and the server, asking Discord nothing', async () => {
    const { fake, intake } = await startDiscordChannel(cleanups);
    fake.dmChannelId(BOB);
    const requestsBefore = fake.calls.length;
    const content = `<@${fake.bot.id}> ask <@!${BOB.id}> in <#${fake.channelIds.random}> for <@&${fake.roleIds.moderators}> <:party:123456789012345678> by <t:1700000000:R>`;
    fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound?.text).toBe('ask @bob in #random for @moderators :party: by 2023-11-14 22:13:20 UTC');
    // Only the acknowledgement and the thread: no lookups of users, roles or channels.
    expect(fake.calls.slice(requestsBefore).filter((call) => call.method === 'GET')).toEqual([]);
  });

  it('still delivers a reply in flight after ingress stopped (a shutdown lets answers finish)', async () => {
    const { fake, intake, adapter } = await startDiscordChannel(cleanups);
    fake.sendUserMessage({ author: ALICE, content: 'answer me while stopping' });
    const [inbound] = await intake.waitForCommits(1);
    const reply = adapter.egress.reply(targetOf(inbound as never));
    reply.update('half an answer');
    await adapter.stop();
    await reply.finish('the whole answer');
    expect(fake.botMessages((inbound as { chatId: string }).chatId).map((m) => m.content)).toContain('the whole answer');
  });

  it('keeps one conversation per DM and marks it private, in workspace @me', async () => {
    const { fake, intake } = await startDiscordChannel(cleanups);
    const first = fake.sendUserMessage({ author: ALICE, content: 'one' });
    const second = fake.sendUserMessage({ author: ALICE, content: 'two' });
    const [a, b] = await intake.waitForCommits(2);
    expect([a, b].map((m) => [m?.chatId, m?.topicId, m?.isPrivateChat, m?.workspaceId])).toEqual([
      [first.channelId, undefined, true, '@me'],
      [second.channelId, undefined, true, '@me'],
    ]);
  });

  it('continues the conversation of the question when someone replies to the answer', async () => {
    const { fake, intake, adapter } = await startDiscordChannel(cleanups);
    const question = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: 'question' });
    const [inbound] = await intake.waitForCommits(1);
    await adapter.egress.reply(targetOf(inbound as never)).finish('answer');
    const [answer] = fake.botMessages(fake.channelIds.general);
    fake.sendUserMessage({ channelId: fake.channelIds.general, author: BOB, content: 'follow-up', replyToMessageId: answer?.id as string });
    const [, followUp] = await intake.waitForCommits(2);
    expect(followUp?.topicId).toBe(question.id);
  });

  it('with mention_only answers mentions (stripped), DMs and allowed_channels, and ignores the rest without a trace', async () => {
    const { fake, intake } = await startDiscordChannel(cleanups, {
      config: { mention_only: true, thread_mode: false, allowed_channels: [] },
    });
    const general = fake.channelIds.general;
    fake.sendUserMessage({ channelId: general, author: ALICE, content: 'just chatting' });
    const mention = fake.sendUserMessage({ channelId: general, author: ALICE, content: `<@${fake.bot.id}> what is up <@!${fake.bot.id}>` });
    const dm = fake.sendUserMessage({ author: BOB, content: 'no mention needed here' });
    const committed = await intake.waitForCommits(2);
    // Channels are handled concurrently: compare without order.
    expect(committed.map((m) => [m.messageId, m.text]).sort()).toEqual([
      [mention.id, 'what is up'],
      [dm.id, 'no mention needed here'],
    ]);
    expect(fake.reactions.map((r) => r.messageId)).not.toContain(fake.store.inChannel(general)[0]?.id);
  });

  it('exempts allowed_channels from mention_only', async () => {
    const { fake, intake } = await startDiscordChannel(cleanups, {
      config: { mention_only: true, allowed_channels: ['4000000000000000002'] },
    });
    fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: 'ignored here' });
    const open = fake.sendUserMessage({ channelId: fake.channelIds.random, author: ALICE, content: 'answered here' });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound).toMatchObject({ messageId: open.id, chatId: fake.channelIds.random, topicId: open.id });
    expect(intake.committed).toHaveLength(1);
  });

  it('serves only allowed_guilds when set, and then no DMs', async () => {
    const other = await startDiscordChannel(cleanups, { config: { allowed_guilds: [OTHER_GUILD] } });
    other.fake.sendUserMessage({ channelId: other.fake.channelIds.general, author: ALICE, content: 'wrong guild' });
    other.fake.sendUserMessage({ author: ALICE, content: 'a DM' });
    const ours = await startDiscordChannel(cleanups, { config: { allowed_guilds: ['3000000000000000001'] } });
    ours.fake.sendUserMessage({ author: ALICE, content: 'a DM' });
    const kept = ours.fake.sendUserMessage({ channelId: ours.fake.channelIds.general, author: ALICE, content: 'right guild' });
    const [inbound] = await ours.intake.waitForCommits(1);
    expect(inbound?.messageId).toBe(kept.id);
    // Messages of one channel are handled in order: the DM was decided before this point.
    expect(ours.intake.reserved).toBe(1);
    await other.fake.waitFor(() => other.fake.gateway.isConnected);
    expect(other.intake.reserved).toBe(0);
    expect(other.fake.reactions).toEqual([]);
  });

  it('ignores a message that is only mentions of the bot, but takes one that is only attachments', async () => {
    const { fake, intake, adapter } = await startDiscordChannel(cleanups);
    fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: `<@${fake.bot.id}>  <@!${fake.bot.id}>` });
    const bytes = new TextEncoder().encode('col1,col2\n1,2\n');
    const withFile = fake.sendUserMessage({
      channelId: fake.channelIds.general,
      author: ALICE,
      content: '',
      attachments: [{ filename: 'data.csv', contentType: 'text/csv', bytes }],
    });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound).toMatchObject({ messageId: withFile.id, text: '', files: [{ name: 'data.csv', mimeType: 'text/csv', isImage: false, declaredSize: bytes.byteLength }] });
    expect(intake.committed).toHaveLength(1);
    const file = inbound?.files?.[0];
    expect(file?.ref).not.toContain(fake.token);
    expect(await adapter.files?.download(file as never)).toEqual(bytes);
  });

  it('hands over a 10,000-character message intact', async () => {
    const { fake, intake } = await startDiscordChannel(cleanups);
    const text = `${'x'.repeat(9_999)}y`;
    fake.sendUserMessage({ author: ALICE, content: text });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound?.text).toBe(text);
  });

  it('admits a message dispatched again after a restart (discord.js no longer has it cached) once', async () => {
    const started = await startDiscordChannel(cleanups);
    const { fake, intake } = started;
    const first = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: 'once' });
    await intake.waitForCommits(1);
    const payload = fake.gateway.lastDispatch('MESSAGE_CREATE');
    await started.adapter.stop();
    await started.restart();
    fake.gateway.dispatch('MESSAGE_CREATE', payload);
    const second = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: 'twice' });
    // One channel's messages are admitted in order: the repeat was settled before this commit.
    await intake.waitForCommits(2);
    expect(intake.committed.map((m) => m.messageId)).toEqual([first.id, second.id]);
    await fake.waitFor(() => fake.reactions.length >= 2);
    expect(fake.reactions.map((r) => r.messageId)).toEqual([first.id, second.id]);
  });

  it('tells the person the server is busy when the intake refuses, and posts nothing else (no thread, no 👀)', async () => {
    const { fake, intake } = await startDiscordChannel(cleanups, { config: { thread_mode: true } });
    intake.isFull = true;
    const sent = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: 'too busy?' });
    const notice = await fake.waitFor(() => fake.botMessages(fake.channelIds.general)[0]);
    expect(notice).toMatchObject({ content: INGRESS_TEXTS.busy, replyTo: sent.id });
    expect([intake.refused, intake.committed.length]).toEqual([1, 0]);
    expect([fake.threads(), fake.reactions, fake.typing]).toEqual([[], [], []]);
  });

  it('rejects start() with CHANNEL_UNAUTHORIZED on a 401 at gateway/bot and reports why', async () => {
    const { adapter, fake } = await startDiscordChannel(cleanups, { fakeOptions: { rejectToken: true }, isStarted: false });
    const error = await adapter.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChannelError);
    expect(error).toMatchObject({ code: 'CHANNEL_UNAUTHORIZED', platform: 'discord' });
    expect((error as Error).message).not.toContain(fake.token);
    expect(adapter.status()).toEqual({ running: false, reason: 'Discord rejected the bot token (401 Unauthorized)' });
    expect(fake.gateway.events.filter((e) => e.kind === 'identify')).toEqual([]);
  });

  it('rejects start() when Discord refuses the Message Content intent (4014), saying what to enable', async () => {
    const { adapter, fake } = await startDiscordChannel(cleanups, { fakeOptions: { refusesMessageContent: true }, isStarted: false });
    const error = await adapter.start().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CHANNEL_REJECTED', platform: 'discord' });
    expect(adapter.status()).toEqual({ running: false, reason: expect.stringContaining('Message Content intent (4014') });
    expect(fake.gateway.events.filter((e) => e.kind === 'identify')).toHaveLength(1);
  });

  it('answers /connect <code> before allowed_users, with the binder reply, identity scoped to the guild', async () => {
    const requests: unknown[] = [];
    const { fake, intake } = await startDiscordChannel(cleanups, {
      config: { allowed_users: [BOB.id] },
      deps: {
        binder: {
          bind: async (_provider, request) => {
            requests.push(request);
            return 'Discord connected to DeerFlow as *alice_b* <@1>.';
          },
        },
      },
    });
    const sent = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: `<@${fake.bot.id}> /connect Ab12Cd34` });
    const answer = await fake.waitFor(() => fake.botMessages(fake.channelIds.general)[0]);
    expect(answer).toMatchObject({ replyTo: sent.id });
    // The binder's answer is plain text: it shows as written, neither styled nor a mention.
    expect(answer && fake.display(answer).shown).toBe('Discord connected to DeerFlow as *alice_b* <@1>.');
    expect(requests).toEqual([
      expect.objectContaining({ code: 'Ab12Cd34', identity: { externalAccountId: ALICE.id, workspaceId: fake.guildId }, accountName: 'Alice' }),
    ]);
    fake.sendUserMessage({ author: ALICE, content: '/connect Zz99' });
    await fake.waitFor(() => requests.length === 2);
    expect(requests[1]).toMatchObject({ identity: { externalAccountId: ALICE.id } });
    expect((requests[1] as { identity: object }).identity).not.toHaveProperty('workspaceId');
    expect(intake.reserved).toBe(0);
  });
});

describe('Discord thread_mode', () => {
  it('starts a thread from the message, named deerflow-<name>-<id>, and answers inside it', async () => {
    const { fake, intake, adapter } = await startDiscordChannel(cleanups, { config: { thread_mode: true } });
    const sent = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: 'start a thread' });
    const [inbound] = await intake.waitForCommits(1);
    expect(fake.threads()).toEqual([expect.objectContaining({ id: sent.id, name: `deerflow-Alice-${sent.id}`, parentId: fake.channelIds.general })]);
    expect(inbound).toMatchObject({ chatId: sent.id, topicId: sent.id, replyTo: { messageId: sent.id } });
    await fake.waitFor(() => fake.reactions.some((r) => r.messageId === sent.id && r.channelId === fake.channelIds.general));
    await adapter.egress.reply(targetOf(inbound as never)).finish('in the thread');
    expect(fake.botMessages(sent.id).map((m) => [m.content, m.replyTo])).toEqual([['in the thread', undefined]]);
    expect(fake.botMessages(fake.channelIds.general)).toEqual([]);
  });

  it('cuts thread names to 100 characters', async () => {
    const longName = { id: '700000000000000009', username: 'long', global_name: 'N'.repeat(120) };
    const { fake, intake } = await startDiscordChannel(cleanups, { config: { thread_mode: true } });
    fake.sendUserMessage({ channelId: fake.channelIds.general, author: longName, content: 'hi' });
    await intake.waitForCommits(1);
    expect(fake.threads()[0]?.name).toHaveLength(100);
  });

  it('with mention_only, continues a thread it opened without a mention', async () => {
    const { fake, intake } = await startDiscordChannel(cleanups, { config: { mention_only: true } });
    const root = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: `<@${fake.bot.id}> help me` });
    const [first] = await intake.waitForCommits(1);
    expect(first).toMatchObject({ chatId: root.id, topicId: root.id, text: 'help me' });
    const inThread = fake.sendUserMessage({ channelId: root.id, author: BOB, content: 'more details' });
    const [, second] = await intake.waitForCommits(2);
    expect(second).toMatchObject({ messageId: inThread.id, chatId: root.id, topicId: root.id, text: 'more details' });
  });

  it('answers in the channel when the thread cannot be made', async () => {
    const { fake, intake } = await startDiscordChannel(cleanups, { config: { thread_mode: true } });
    fake.failNext('thread', { status: 403, code: 50013, message: 'Missing Permissions' });
    const sent = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: 'no threads here' });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound).toMatchObject({ chatId: fake.channelIds.general, topicId: sent.id });
    expect(fake.threads()).toEqual([]);
  });

  it('keeps the thread map in the state store: a new adapter instance still knows its threads', async () => {
    const started = await startDiscordChannel(cleanups, { config: { mention_only: true } });
    const { fake, intake } = started;
    const root = fake.sendUserMessage({ channelId: fake.channelIds.general, author: ALICE, content: `<@${fake.bot.id}> remember me` });
    await intake.waitForCommits(1);
    await started.adapter.stop();
    await started.restart();
    const later = fake.sendUserMessage({ channelId: root.id, author: ALICE, content: 'still here, no mention' });
    const [, inbound] = await intake.waitForCommits(2);
    expect(inbound).toMatchObject({ messageId: later.id, chatId: root.id, topicId: root.id });
    expect(fake.callsTo('thread')).toHaveLength(1);
  });

  it('ignores messages in threads it did not open when mention_only is set', async () => {
    const { fake, intake } = await startDiscordChannel(cleanups, { config: { mention_only: true } });
    // A person opens a thread the bot does not know (made through the fake's store directly).
    const root = fake.sendUserMessage({ channelId: fake.channelIds.general, author: BOB, content: 'people talk' });
    const thread = fake.store.addThread(root, 'people', BOB.id);
    fake.gateway.dispatch('THREAD_CREATE', { id: thread.id, type: 11, guild_id: fake.guildId, parent_id: fake.channelIds.general, name: 'people', thread_metadata: { archived: false, auto_archive_duration: 1440, locked: false } });
    fake.sendUserMessage({ channelId: thread.id, author: BOB, content: 'not for the bot' });
    const mention = fake.sendUserMessage({ channelId: thread.id, author: BOB, content: `<@${fake.bot.id}> now for you` });
    const [inbound] = await intake.waitForCommits(1);
    // A thread cannot hold a thread: the answer goes into this one, keyed by the message.
    expect(inbound).toMatchObject({ messageId: mention.id, chatId: thread.id, topicId: mention.id });
    expect(intake.committed).toHaveLength(1);
  });
});

describe('FakeDiscord', () => {
  it('answers wrong tokens 401 and unknown messages 404 with Discord error bodies', async () => {
    const fake = new FakeDiscord();
    await fake.start();
    cleanups.push(() => fake.stop());
    const bad = await fetch(`${fake.apiRoot}/v10/users/@me`, { headers: { authorization: 'Bot nope' } });
    expect([bad.status, await bad.json()]).toEqual([401, { message: '401: Unauthorized', code: 0 }]);
    const missing = await fetch(`${fake.apiRoot}/v10/channels/${fake.channelIds.general}/messages/1`, { headers: { authorization: `Bot ${fake.token}` } });
    expect([missing.status, await missing.json()]).toEqual([404, { message: 'Unknown Message', code: 10008 }]);
  });
});
