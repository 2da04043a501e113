import { afterEach, describe, expect, it } from 'vitest';
import { slackChannel } from '../../../channels/slack/index.js';
import type { ChannelAdapter, ChatBinder, InboundMessage, Reply, ReplyTarget, WebhookDeliveries } from '../../../src/channel/types.js';
import { ChannelError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeSlack, type FakeSlackOptions, type UserMessageInput } from '../../fakes/slack/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { updateTimesWhileStreaming } from '../../helpers/streaming-partials.js';

/**
 * The real Bolt adapter (Socket Mode) against FakeSlack: what the contract suite does not cover.
 * Assertions read what people see in the fake workspace and what reached the intake.
 */

const COMMANDS = ['new', 'status', 'help'].map((name) => ({ name, description: `The ${name} command` }));
const WORKING = 'Working on it...';
const ALICE = 'U0ALICE1';
const DM = `D${ALICE}`;
const CHANNEL = 'C0TEAM01';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startSlack(
  config: Record<string, unknown> = {},
  options: { fake?: FakeSlackOptions; binder?: ChatBinder; isStarted?: boolean; deliveries?: WebhookDeliveries } = {},
) {
  const fake = new FakeSlack(options.fake);
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const parsed = slackChannel.configSchema.parse({ enabled: true, bot_token: fake.botToken, app_token: fake.appToken, api_url: fake.apiUrl, ...config });
  const deps = testChannelDeps({
    intake,
    commands: COMMANDS,
    logger: silentLogger(),
    ...(options.binder ? { binder: options.binder } : {}),
    ...(options.deliveries ? { deliveries: options.deliveries } : {}),
  });
  const adapter = await slackChannel.create(parsed, deps);
  cleanups.push(() => adapter.stop());
  if (options.isStarted !== false) await adapter.start();
  return { fake, intake, adapter };
}

function dm(text: string, extra: Partial<UserMessageInput> = {}): UserMessageInput {
  return { channel: DM, channelType: 'im', user: ALICE, text, ...extra };
}

function mention(fake: FakeSlack, text: string, extra: Partial<UserMessageInput> = {}): UserMessageInput {
  return { channel: CHANNEL, channelType: 'channel', user: ALICE, text: `<@${fake.botUserId}> ${text}`, eventType: 'app_mention', ...extra };
}

function targetOf(message: InboundMessage): ReplyTarget {
  return { chatId: message.chatId, topicId: message.topicId, isPrivateChat: message.isPrivateChat, replyTo: message.replyTo };
}

function replyTo(adapter: ChannelAdapter, message: InboundMessage): Reply {
  return adapter.egress.reply(targetOf(message));
}

async function committed(intake: RecordingIntake, count: number): Promise<InboundMessage> {
  await intake.waitUntil(() => intake.committed.length >= count);
  return intake.committed[count - 1] as InboundMessage;
}

describe('Slack ingress', () => {
  it('acknowledges a DM with 👀 and a placeholder in its thread, and hands over its ids', async () => {
    const { fake, intake } = await startSlack();
    const sent = await fake.sendUserMessage(dm('hello'));
    const inbound = await committed(intake, 1);
    expect(inbound).toMatchObject({
      channel: 'slack',
      chatId: DM,
      topicId: sent.ts,
      userId: ALICE,
      workspaceId: fake.teamId,
      messageId: sent.ts,
      text: 'hello',
      isPrivateChat: true,
    });
    const [placeholder] = fake.botMessages(DM);
    expect(placeholder).toMatchObject({ text: WORKING, threadTs: sent.ts });
    expect(inbound.replyTo).toEqual({ messageId: sent.ts, placeholderId: placeholder?.ts });
    expect(fake.messages(DM).find((m) => m.ts === sent.ts)?.reactions).toEqual(['eyes']);
    expect(fake.acks.map((a) => a.envelopeId)).toContain(sent.envelopeId);
  });

  it('strips only our own leading mention, names the others (asking users.info once); a reply in a thread continues the thread', async () => {
    const { fake, intake } = await startSlack();
    fake.users.set('U0OTHER1', { name: 'olga.o', displayName: 'Olga', realName: 'Olga Olsen' });
    fake.channelNames.set('C0DEPLOY', 'deploys');
    const root = await fake.sendUserMessage(mention(fake, 'deploy <@U0OTHER1> please, not <@U0GONE01>, see <#C0DEPLOY>'));
    await fake.sendUserMessage(mention(fake, 'and more & <more>', { threadTs: root.ts }));
    await fake.sendUserMessage({ channel: CHANNEL, channelType: 'channel', user: ALICE, text: '<@U0OTHER1> over to you' });
    await intake.waitUntil(() => intake.committed.length === 3);
    expect(intake.committed.map((m) => [m.text, m.topicId, m.isPrivateChat])).toEqual([
      // A member Slack does not know (users.info: user_not_found) keeps the id.
      ['deploy @Olga please, not @U0GONE01, see #deploys', root.ts, false],
      ['and more & <more>', root.ts, false],
      ['@Olga over to you', expect.not.stringMatching(root.ts), false],
    ]);
    expect(fake.calls.filter((c) => c.method === 'users.info').map((c) => c.params.user)).toEqual(['U0OTHER1', 'U0GONE01']);
    // Both acknowledgements sit in the root's thread.
    expect(fake.botMessages(CHANNEL).map((m) => m.threadTs).slice(0, 2)).toEqual([root.ts, root.ts]);
  });

  it('hands a redelivered event and the app_mention + message pair of one mention over once', async () => {
    const { fake, intake } = await startSlack();
    const sent = await fake.sendUserMessage(mention(fake, 'only once'));
    await committed(intake, 1);
    // Slack sends the same message as `message` too when the app subscribes to message.channels.
    const message = fake.messages(CHANNEL).find((m) => m.ts === sent.ts);
    await fake.deliverEvent({ type: 'message', channel: CHANNEL, channel_type: 'channel', user: ALICE, text: message?.text, ts: sent.ts, team: fake.teamId });
    // And a retry of the first event (same envelope content, as after a missed ack).
    await fake.deliverEvent({ type: 'app_mention', channel: CHANNEL, user: ALICE, text: message?.text, ts: sent.ts, team: fake.teamId });
    const later = await fake.sendUserMessage(mention(fake, 'a new one'));
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === later.ts));
    expect(intake.committed.map((m) => m.messageId)).toEqual([sent.ts, later.ts]);
    expect(fake.botMessages(CHANNEL).filter((m) => m.threadTs === sent.ts)).toHaveLength(1);
  });

  it('still hands messages over when the delivery store is down (fails open)', async () => {
    const broken: WebhookDeliveries = {
      begin: async () => {
        throw new Error('database unavailable');
      },
      finish: async () => undefined,
      fail: async () => undefined,
    };
    const { fake, intake } = await startSlack({}, { deliveries: broken });
    const sent = await fake.sendUserMessage(dm('anyone there?'));
    expect((await committed(intake, 1)).messageId).toBe(sent.ts);
  });

  it('ignores edits, joins and other subtypes, but takes file shares', async () => {
    const { fake, intake } = await startSlack();
    await fake.deliverEvent({ type: 'message', subtype: 'message_changed', channel: DM, channel_type: 'im', ts: '1.000001', hidden: true });
    await fake.deliverEvent({ type: 'message', subtype: 'channel_join', channel: CHANNEL, channel_type: 'channel', user: ALICE, text: 'joined', ts: '1.000002' });
    const shared = await fake.sendUserMessage(dm('', { files: [{ name: 'a.txt', mimetype: 'text/plain', bytes: new TextEncoder().encode('hi') }] }));
    const inbound = await committed(intake, 1);
    expect(inbound.messageId).toBe(shared.ts);
    expect(inbound.files).toEqual([expect.objectContaining({ name: 'a.txt', mimeType: 'text/plain', isImage: false, declaredSize: 2 })]);
  });

  it('binds with /connect <code> after a mention, before the allow-list, answering in the thread', async () => {
    const requests: unknown[] = [];
    const binder: ChatBinder = {
      bind: async (_provider, request) => {
        requests.push(request);
        return 'Slack connected to DeerFlow.';
      },
    };
    const { fake, intake } = await startSlack({ allowed_users: ['U0SOMEONE'] }, { binder });
    const sent = await fake.sendUserMessage(mention(fake, '/connect Zx9Code extra words'));
    await fake.waitFor(() => fake.botMessages(CHANNEL).some((m) => m.text === 'Slack connected to DeerFlow.' && m.threadTs === sent.ts));
    expect(requests).toEqual([
      expect.objectContaining({ code: 'Zx9Code', identity: { externalAccountId: ALICE, workspaceId: fake.teamId } }),
    ]);
    expect(intake.reserved).toBe(0);
  });

  it('rejects start() with CHANNEL_UNAUTHORIZED on invalid_auth and reports why', async () => {
    const { adapter } = await startSlack({}, { fake: { rejectToken: true }, isStarted: false });
    const failure = await adapter.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ChannelError);
    expect(failure).toMatchObject({ code: 'CHANNEL_UNAUTHORIZED', platform: 'slack' });
    expect(adapter.status()).toEqual({ running: false, reason: 'Slack rejected a token (invalid_auth)' });
  });

  it('reconnects after a refresh request and after a dropped socket; events sent meanwhile still arrive', async () => {
    const { fake, intake } = await startSlack();
    fake.requestRefresh();
    await fake.waitFor(() => fake.connectionsOpened >= 2 && fake.openSockets === 1, 15_000);
    fake.dropSockets();
    const whileDown = await fake.sendUserMessage(dm('sent while the socket was down'));
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === whileDown.ts), 20_000);
    expect(fake.connectionsOpened).toBeGreaterThanOrEqual(3);
    expect(fake.botMessages(DM).filter((m) => m.text === WORKING)).toHaveLength(1);
  }, 30_000);
});

describe('Slack egress', () => {
  it('streams a DM natively: starts in the thread, appends only what is new, removes the placeholder, ends on the final', async () => {
    const { fake, intake, adapter } = await startSlack();
    const sent = await fake.sendUserMessage(dm('question'));
    const reply = replyTo(adapter, await committed(intake, 1));
    reply.update('Hello ▉');
    await fake.waitFor(() => fake.botMessages(DM).some((m) => m.isStreaming));
    reply.update('Hello world ▉');
    await fake.waitFor(() => fake.calls.some((c) => c.method === 'chat.appendStream'));
    await reply.finish('Hello world, **done**.', { failed: false });
    const messages = fake.botMessages(DM);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ threadTs: sent.ts, text: 'Hello world, *done*.', isStreaming: false });
    expect(messages[0]?.history).toEqual(['Hello', 'Hello world', 'Hello world, *done*.']);
    expect(fake.calls.filter((c) => c.method === 'chat.appendStream').map((c) => c.params.markdown_text)).toEqual([' world']);
    expect(fake.messages(DM).find((m) => m.ts === sent.ts)?.reactions).toEqual(['eyes', 'white_check_mark']);
  });

  it('falls back to editing when Slack refuses a stream mid-way, losing no text, and edits from then on', async () => {
    const { fake, intake, adapter } = await startSlack();
    await fake.sendUserMessage(dm('first'));
    const reply = replyTo(adapter, await committed(intake, 1));
    reply.update('Part one');
    await fake.waitFor(() => fake.botMessages(DM).some((m) => m.isStreaming));
    fake.failNext('chat.appendStream', { kind: 'error', error: 'not_allowed' });
    reply.update('Part one, part two');
    const stream = await fake.waitFor(() => fake.botMessages(DM).find((m) => m.text === 'Part one, part two'));
    expect(stream.history).toEqual(['Part one', 'Part one, part two']);
    await reply.finish('Part one, part two, the end.');
    expect(fake.botMessages(DM).map((m) => m.text)).toEqual(['Part one, part two, the end.']);
    // The workspace refused streaming: the next reply edits its placeholder without trying.
    const streamsBefore = fake.calls.filter((c) => c.method.endsWith('Stream')).length;
    await fake.sendUserMessage(dm('second'));
    const next = replyTo(adapter, await committed(intake, 2));
    next.update('Editing now');
    await fake.waitFor(() => fake.botMessages(DM).some((m) => m.text === 'Editing now'));
    await next.finish('Edited.');
    expect(fake.calls.filter((c) => c.method.endsWith('Stream'))).toHaveLength(streamsBefore);
    expect(fake.botMessages(DM).at(-1)?.history).toEqual([WORKING, 'Editing now', 'Edited.']);
  });

  it('edits the placeholder when chat.startStream is not available', async () => {
    const { fake, intake, adapter } = await startSlack();
    fake.streamingError = 'unknown_method';
    await fake.sendUserMessage(dm('question'));
    const reply = replyTo(adapter, await committed(intake, 1));
    reply.update('Partial ▉');
    await fake.waitFor(() => fake.botMessages(DM).some((m) => m.text === 'Partial ▉'));
    await reply.finish('Final.');
    expect(fake.botMessages(DM).map((m) => m.history)).toEqual([[WORKING, 'Partial ▉', 'Final.']]);
  });

  it('keeps concurrent replies in one workspace within the Tier 3 chat.update budget', async () => {
    const { fake, intake, adapter } = await startSlack();
    for (const text of ['one', 'two', 'three']) await fake.sendUserMessage(mention(fake, text));
    await intake.waitUntil(() => intake.committed.length === 3);
    const replies = intake.committed.map((m) => replyTo(adapter, m));
    const updates = await updateTimesWhileStreaming(fake, replies);
    const gaps = updates.slice(1).map((at, i) => at - (updates[i] as number));
    expect(updates.length).toBeGreaterThanOrEqual(3);
    // Undocumented timing slack: timers fire a few ms early or late; the budget is 1200 ms.
    expect(gaps.filter((gap) => gap < 1150)).toEqual([]);
    await Promise.all(replies.map((reply, i) => reply.finish(`done ${i}`)));
    expect(fake.botMessages(CHANNEL).map((m) => m.text).sort()).toEqual(['done 0', 'done 1', 'done 2']);
  }, 60_000);

  it('waits out a 429 on a final post (Retry-After) without sending early, then delivers', async () => {
    const { fake, intake, adapter } = await startSlack({ native_streaming: false });
    await fake.sendUserMessage(mention(fake, 'long answer please'));
    const reply = replyTo(adapter, await committed(intake, 1));
    fake.failNext('chat.postMessage', { kind: 'rate-limit', retryAfterSeconds: 1 });
    const long = `${'a'.repeat(3990)}\n${'b'.repeat(100)}`;
    await reply.finish(long);
    const limited = fake.calls.find((c) => c.response?.ok === false);
    const retried = fake.calls.filter((c) => c.method === 'chat.postMessage').at(-1);
    expect((retried?.at ?? 0) - (limited?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(fake.rateLimitViolations).toEqual([]);
    // Each part shows on its own; the newline the split ended the first part with is not shown.
    expect(fake.botMessages(CHANNEL).map((m) => m.shown)).toEqual(['a'.repeat(3990), 'b'.repeat(100)]);
  });

  it('reacts ✗ when the final cannot be delivered, and ✗ when told the run failed', async () => {
    const { fake, intake, adapter } = await startSlack({ native_streaming: false });
    const first = await fake.sendUserMessage(dm('one'));
    const reply = replyTo(adapter, await committed(intake, 1));
    fake.failNext('chat.update', { kind: 'error', error: 'cant_update_message' });
    fake.failNext('chat.postMessage', { kind: 'error', error: 'channel_not_found' });
    await expect(reply.finish('never shown')).rejects.toMatchObject({ code: 'CHANNEL_REJECTED' });
    const second = await fake.sendUserMessage(dm('two'));
    await replyTo(adapter, await committed(intake, 2)).finish('An error occurred.', { failed: true });
    const reactions = (ts: string) => fake.messages(DM).find((m) => m.ts === ts)?.reactions;
    expect([reactions(first.ts), reactions(second.ts)]).toEqual([
      ['eyes', 'x'],
      ['eyes', 'x'],
    ]);
  });

  it('renders the final as mrkdwn: escapes &, <, > and converts bold, links and code', async () => {
    const { fake, intake, adapter } = await startSlack({ native_streaming: false });
    await fake.sendUserMessage(dm('format'));
    await replyTo(adapter, await committed(intake, 1)).finish('**A & B** <tag> see [docs](https://example.com) `x<y`');
    expect(fake.botMessages(DM)[0]?.text).toBe('*A &amp; B* &lt;tag&gt; see <https://example.com|docs> `x&lt;y`');
  });

  it('completes a streaming reply across a dropped socket', async () => {
    const { fake, intake, adapter } = await startSlack();
    await fake.sendUserMessage(dm('question'));
    const reply = replyTo(adapter, await committed(intake, 1));
    reply.update('Before the drop');
    await fake.waitFor(() => fake.botMessages(DM).some((m) => m.isStreaming));
    fake.dropSockets();
    reply.update('Before the drop, and after');
    await reply.finish('Before the drop, and after. Done.');
    expect(fake.botMessages(DM).map((m) => m.text)).toEqual(['Before the drop, and after. Done.']);
    await fake.waitFor(() => fake.openSockets === 1, 15_000);
    expect(adapter.status().running).toBe(true);
  }, 20_000);
});

describe('Slack text in and out (issue #20)', () => {
  it('streams partials as markdown_text that show what the agent wrote, never half-written markup', async () => {
    const { fake, intake, adapter } = await startSlack();
    await fake.sendUserMessage(dm('explain'));
    const reply = replyTo(adapter, await committed(intake, 1));
    const streamed = () => fake.botMessages(DM).find((m) => m.isStreaming);
    reply.update('Tom & Jerry <3 a_b\n\nthis is **bo ▉');
    // The unclosed bold waits: what shows could never be written differently later.
    expect((await fake.waitFor(() => streamed()))?.shown).toBe('Tom & Jerry <3 a_b');
    reply.update('Tom & Jerry <3 a_b\n\nthis is **bold** and `x < y`\n\n- one ▉');
    await fake.waitFor(() => streamed()?.shown.includes('bold'));
    expect(streamed()?.shown).toBe('Tom & Jerry <3 a_b\n\nthis is bold and x < y');
    const final = 'Tom & Jerry <3 a_b\n\nthis is **bold** and `x < y`\n\n- one\n- two';
    await reply.finish(final);
    expect(fake.botMessages(DM).map((m) => [m.shown, m.isStreaming])).toEqual([['Tom & Jerry <3 a_b\n\nthis is bold and x < y\n\n• one\n• two', false]]);
  });

  it('closes a code block a split cuts, and reopens it in the next message', async () => {
    const { fake, intake, adapter } = await startSlack({ native_streaming: false });
    await fake.sendUserMessage(dm('code please'));
    const reply = replyTo(adapter, await committed(intake, 1));
    const lines = Array.from({ length: 400 }, (_, i) => `if (a${i} < b) run();`);
    await reply.finish(`Here:\n\n\`\`\`js\n${lines.join('\n')}\n\`\`\`\n\nDone & dusted.`);
    const messages = fake.botMessages(DM);
    expect(messages.length).toBeGreaterThan(1);
    // Each message holds whole code blocks, so each shows on its own.
    expect(messages.filter((m) => (m.text.match(/```/g) ?? []).length % 2 !== 0).map((m) => m.ts)).toEqual([]);
    expect(messages.map((m) => m.shown).join('\n')).toBe(`Here:\n\n${lines.join('\n')}\n\nDone & dusted.`);
  });

  it('shows server texts as written: the acknowledgement and the binder answer', async () => {
    const binder: ChatBinder = { bind: async () => 'Connected to <DeerFlow> as a_b & c*d*e.' };
    const { fake } = await startSlack({}, { binder });
    const sent = await fake.sendUserMessage(dm('/connect Ab12Cd34'));
    const answer = await fake.waitFor(() => fake.botMessages(DM).find((m) => m.threadTs === sent.ts));
    expect(answer?.shown).toBe('Connected to <DeerFlow> as a_b & c*d*e.');
  });
});
