import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { dingtalkChannel } from '../../../channels/dingtalk/index.js';
import { DINGTALK_LIMITS } from '../../../channels/dingtalk/limits.js';
import type { ChannelAdapter, ChatBindRequest, InboundMessage, ReplyTarget } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { displayMessage } from '../../fakes/dingtalk/display.js';
import { FakeDingTalk, type FakeDingTalkOptions } from '../../fakes/dingtalk/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/** The real adapter and `dingtalk-stream` against FakeDingTalk: the bad inputs and both reply modes. */

const ALICE = 'staffalice01';
const CARD_TEMPLATE = 'fake-card-template.schema';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface StartOptions {
  hasCards?: boolean;
  fake?: FakeDingTalkOptions;
  binds?: ChatBindRequest[];
  clientSecret?: string;
}

async function startDingTalk(options: StartOptions = {}) {
  const fake = new FakeDingTalk(options.fake);
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const config = dingtalkChannel.configSchema.parse({
    enabled: true,
    client_id: fake.clientId,
    client_secret: options.clientSecret ?? fake.clientSecret,
    api_url: fake.apiUrl,
    card_template_id: options.hasCards ? CARD_TEMPLATE : '',
  });
  const binds = options.binds;
  const deps = testChannelDeps({
    intake,
    commands: [{ name: 'new', description: 'Start a new conversation' }],
    logger: silentLogger(),
    ...(binds ? { binder: { bind: async (_provider: string, request: ChatBindRequest) => bindRecorded(binds, request) } } : {}),
  });
  const adapter = await dingtalkChannel.create(config, deps);
  cleanups.push(() => adapter.stop());
  return { fake, intake, adapter };
}

async function bindRecorded(binds: ChatBindRequest[], request: ChatBindRequest): Promise<string> {
  binds.push(request);
  return 'DingTalk connected to DeerFlow.';
}

async function started(options: StartOptions = {}) {
  const context = await startDingTalk(options);
  await context.adapter.start();
  return context;
}

function targetOf(message: InboundMessage): ReplyTarget {
  return { chatId: message.chatId, isPrivateChat: message.isPrivateChat, replyTo: message.replyTo };
}

async function committedOne(intake: RecordingIntake, count = 1): Promise<InboundMessage> {
  await intake.waitUntil(() => intake.committed.length >= count);
  return intake.committed[count - 1] as InboundMessage;
}

describe('DingTalk ingress', () => {
  it('acks and drops unknown message types, empty content and mentions only, with nothing said in the chat', async () => {
    const { fake, intake } = await started();
    const sent = [
      await fake.sendUserMessage({ chat: 'private', userId: ALICE, msgtype: 'interactiveCard', content: { cardId: 'x' } }),
      await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: '   ' }),
      await fake.sendUserMessage({ chat: 'group', userId: ALICE, text: '@Alice @Bob' }),
      await fake.sendUserMessage({ chat: 'private', userId: ALICE, msgtype: 'picture', content: {} }),
    ];
    await fake.waitFor(() => sent.every((s) => fake.isAcked(s.streamMessageId)));
    const kept = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'a real question' });
    expect((await committedOne(intake)).messageId).toBe(kept.msgId);
    expect(intake.committed).toHaveLength(1);
    expect(fake.chats.all().filter((m) => sent.some((s) => s.msgId === m.replyTo))).toEqual([]);
  });

  it('parses rich text, pictures and files into text and file references, and downloads their bytes', async () => {
    const { fake, intake, adapter } = await started();
    const picture = fake.addDownload(new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    const document = fake.addDownload(new TextEncoder().encode('report body'));
    await fake.sendUserMessage({
      chat: 'private',
      userId: ALICE,
      msgtype: 'richText',
      content: { richText: [{ text: 'see ' }, { type: 'picture', downloadCode: picture }, { text: 'this' }] },
    });
    await fake.sendUserMessage({ chat: 'group', userId: ALICE, msgtype: 'file', content: { downloadCode: document, fileName: 'report.pdf' } });
    const rich = await committedOne(intake, 1);
    const file = await committedOne(intake, 2);
    expect(rich).toMatchObject({ text: 'see this', files: [{ name: 'image_0.png', isImage: true, ref: picture }] });
    expect(file).toMatchObject({ text: '', chatId: 'cidGROUP1', isPrivateChat: false, files: [{ name: 'report.pdf', isImage: false, ref: document }] });
    const bytes = await adapter.files?.download(file.files?.[0] as NonNullable<InboundMessage['files']>[number]);
    expect(Buffer.from(bytes as Uint8Array).toString()).toBe('report body');
    await expect(adapter.files?.download({ name: 'x', mimeType: 'x', isImage: false, ref: 'no-such-code' })).rejects.toMatchObject({ code: 'FILE_UNAVAILABLE' });
    await expect(adapter.files?.download({ name: 'x', mimeType: 'x', isImage: false, ref: picture, declaredSize: 51 * 1024 * 1024 })).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
  });

  it('hands over a command after a mention as the command, which the manager can parse', async () => {
    const { fake, intake } = await started();
    await fake.sendUserMessage({ chat: 'group', userId: ALICE, text: '@Bob /new fresh start' });
    await fake.sendUserMessage({ chat: 'group', userId: ALICE, text: '@Bob please look' });
    expect(await committedOne(intake)).toMatchObject({ kind: 'command', text: '/new fresh start' });
    expect(await committedOne(intake, 2)).toMatchObject({ kind: 'chat', text: '@Bob please look' });
  });

  it('gives every group message its own conversation, so members do not wait for each other; quoting continues one, also down a chain', async () => {
    const { fake, intake } = await started();
    const root = await fake.sendUserMessage({ chat: 'group', userId: ALICE, text: 'first question' });
    const other = await fake.sendUserMessage({ chat: 'group', userId: 'staffbob0002', text: 'another question' });
    const reply = await fake.sendUserMessage({ chat: 'group', userId: 'staffbob0002', text: 'on the first', quotedMessageId: root.msgId });
    const replyToReply = await fake.sendUserMessage({ chat: 'group', userId: ALICE, text: 'still the first', quotedMessageId: reply.msgId });
    await committedOne(intake, 4);
    const topicOf = (msgId: string) => intake.committed.find((m) => m.messageId === msgId)?.topicId;
    expect(topicOf(root.msgId)).toBe(root.msgId);
    expect(topicOf(other.msgId)).toBe(other.msgId);
    expect([topicOf(reply.msgId), topicOf(replyToReply.msgId)]).toEqual([root.msgId, root.msgId]);
    // In a P2P chat a quote changes nothing: the chat is one conversation.
    const direct = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'hi', quotedMessageId: root.msgId });
    await committedOne(intake, 5);
    expect(topicOf(direct.msgId)).toBeUndefined();
  });

  it('handles a callback delivered twice once, and acks both deliveries', async () => {
    const { fake, intake } = await started();
    const first = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'only once' });
    await committedOne(intake);
    const data = JSON.parse(String((fake as unknown as { pending: Map<string, { frame: string }> }).pending.get(first.streamMessageId)?.frame)) as { data: string };
    const again = await fake.deliverCallback(JSON.parse(data.data) as Record<string, unknown>);
    await fake.waitFor(() => fake.isAcked(again));
    expect(intake.committed.map((m) => m.messageId)).toEqual([first.msgId]);
    expect(fake.botMessages(ALICE).filter((m) => m.text === '⏳ Working on it...')).toHaveLength(1);
  });

  it('acks an admitted callback at once (no redelivery), while one the intake refused is redelivered and then admitted', async () => {
    const { fake, intake } = await started({ fake: { redeliverAfterMs: 300 } });
    const prompt = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'quick' });
    await fake.waitFor(() => fake.isAcked(prompt.streamMessageId));
    const ackedAfterMs = (fake.acks[0]?.at ?? 0) - (fake.deliveriesOf(prompt.streamMessageId)[0] ?? 0);
    expect(ackedAfterMs).toBeLessThan(300);
    intake.isFull = true;
    const refused = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'later please' });
    await intake.waitUntil(() => intake.refused === 1);
    intake.isFull = false;
    await fake.waitFor(() => fake.isAcked(refused.streamMessageId), 3000);
    expect(fake.deliveriesOf(refused.streamMessageId).length).toBeGreaterThanOrEqual(2);
    expect(fake.deliveriesOf(prompt.streamMessageId)).toHaveLength(1);
    expect(intake.committed.map((m) => m.messageId)).toEqual([prompt.msgId, refused.msgId]);
  });

  it('binds with the staff id, per group conversation and without a workspace in P2P, before anything else', async () => {
    const binds: ChatBindRequest[] = [];
    const { fake, intake } = await started({ binds });
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: '/connect Code1234' });
    await fake.sendUserMessage({ chat: 'group', userId: ALICE, text: '/connect Code5678' });
    await fake.waitFor(() => fake.chats.all().filter((m) => m.text === 'DingTalk connected to DeerFlow.').length === 2);
    expect(binds.map((b) => [b.code, b.identity])).toEqual([
      ['Code1234', { externalAccountId: ALICE }],
      ['Code5678', { externalAccountId: ALICE, workspaceId: 'cidGROUP1' }],
    ]);
    expect(intake.reserved).toBe(0);
  });

  it('uses the sender id when there is no staff id, and answers pings and events', async () => {
    const { fake, intake } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: 'external1', text: 'hi', hasNoStaffId: true });
    expect(await committedOne(intake)).toMatchObject({ userId: '$:LWCP_v1:$external1', chatId: '$:LWCP_v1:$external1' });
    const ping = fake.ping();
    await fake.waitFor(() => fake.pongs.some((p) => p.messageId === ping));
    const event = fake.sendEvent('user_add_org');
    expect(await fake.waitFor(() => fake.eventAcks.find((a) => a.messageId === event))).toMatchObject({ data: '{"status":"SUCCESS"}' });
    expect(intake.committed).toHaveLength(1);
  });

  it('reconnects when DingTalk asks it to with a SYSTEM disconnect, and keeps receiving', async () => {
    const { fake, intake } = await started();
    fake.askToReconnect();
    await fake.waitFor(() => fake.connectionsOpened === 2, 5000);
    await fake.sendUserMessage({ chat: 'group', userId: ALICE, text: 'after the reconnect' });
    expect((await committedOne(intake)).text).toBe('after the reconnect');
  });

  it('rejects start() with a ChannelError when the gateway refuses the credentials', async () => {
    const { adapter } = await startDingTalk({ clientSecret: 'wrong-secret' });
    await expect(adapter.start()).rejects.toMatchObject({ name: 'ChannelError', code: 'CHANNEL_UNAUTHORIZED' });
    expect(adapter.status().running).toBe(false);
  });
});

describe('DingTalk replies without a card template', () => {
  it('shows a code block a split cut as code in both messages, closed in one and reopened in the next', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'a long script?' });
    const message = await committedOne(intake);
    const lines = Array.from({ length: Math.ceil(DINGTALK_LIMITS.maxMessageChars / 10) }, (_, i) => `  echo ${i} && x < y`);
    await adapter.egress.reply(targetOf(message)).finish(`Here:\n\n\`\`\`sh\n${lines.join('\n')}\n\`\`\`\n\nDone.`);
    const answers = fake.botMessages(ALICE).filter((m) => m.kind === 'markdown');
    expect(answers.length).toBeGreaterThan(1);
    const shown = answers.map((m) => displayMessage(m.kind, m.text).shown);
    expect(shown.join('\n').split('\n').filter((line) => line !== '')).toEqual(['Here:', ...lines, 'Done.']);
  });

  it('says "⏳ Working on it..." and sends the final as DingTalk markdown through the session webhook', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'code?' });
    const message = await committedOne(intake);
    expect(adapter.capabilities.streaming).toBe('none');
    await adapter.egress.reply(targetOf(message)).finish('Run `ls`:\n```sh\nls -la\n```\n---\n| a | b |\n|---|---|\n| 1 | 2 |');
    const [ack, final] = fake.botMessages(ALICE);
    expect(ack).toMatchObject({ kind: 'text', text: '⏳ Working on it...', via: 'session' });
    expect(final).toMatchObject({ kind: 'markdown', via: 'session', replyTo: message.messageId });
    expect(final?.text).toBe('Run **ls**:\n```sh\nls -la\n```\n———\n```\n| a   | b   |\n| --- | --- |\n| 1   | 2   |\n```');
  });

  it('replies through the robot API once the session webhook expired, to the user or the group', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'p2p' });
    await fake.sendUserMessage({ chat: 'group', userId: ALICE, text: 'group' });
    const [p2p, group] = [await committedOne(intake, 1), await committedOne(intake, 2)];
    fake.expireSessionWebhooks();
    await adapter.egress.reply(targetOf(p2p)).finish('late answer');
    await adapter.egress.reply(targetOf(group)).finish('late group answer');
    expect(fake.botMessages(ALICE).at(-1)).toMatchObject({ via: 'robot', kind: 'markdown', text: 'late answer' });
    expect(fake.botMessages('cidGROUP1').at(-1)).toMatchObject({ via: 'robot', kind: 'markdown', text: 'late group answer' });
    expect(fake.calls.map((c) => c.path)).toEqual(expect.arrayContaining(['/v1.0/robot/oToMessages/batchSend', '/v1.0/robot/groupMessages/send']));
  });

  it('sends files as an upload then an image or file message, refusing ones over 20 MiB', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'files please' });
    const target = targetOf(await committedOne(intake));
    const dir = await mkdtemp(join(tmpdir(), 'dingtalk-files-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const png = join(dir, 'chart.png');
    await writeFile(png, new Uint8Array([1, 2, 3]));
    await adapter.files?.send(target, { hostPath: png, name: 'chart.png', mimeType: 'image/png', isImage: true, size: 3 });
    await adapter.files?.send(target, { hostPath: png, name: 'data.csv', mimeType: 'text/csv', isImage: false, size: 3 });
    const [image, file] = fake.botMessages(ALICE).slice(-2);
    expect(image).toMatchObject({ kind: 'image' });
    expect(file).toMatchObject({ kind: 'file', fileName: 'data.csv' });
    expect(Buffer.from(fake.uploads.get(String(image?.mediaId))?.bytes ?? []).toString('hex')).toBe('010203');
    await expect(adapter.files?.send(target, { hostPath: png, name: 'big.bin', mimeType: 'x', isImage: false, size: 21 * 1024 * 1024 })).rejects.toMatchObject({
      code: 'FILE_TOO_LARGE',
    });
  });
});

describe('DingTalk AI card replies', () => {
  async function cardReply(fakeOptions?: FakeDingTalkOptions) {
    const context = await started({ hasCards: true, ...(fakeOptions ? { fake: fakeOptions } : {}) });
    await context.fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'stream please' });
    const message = await committedOne(context.intake);
    return { ...context, message, reply: context.adapter.egress.reply(targetOf(message)) };
  }

  function cardOf(fake: FakeDingTalk, adapter: ChannelAdapter, message: InboundMessage) {
    expect(adapter.capabilities.streaming).toBe('card');
    return fake.chats.find(String(message.replyTo.placeholderId));
  }

  it('refreshes an access token that expired mid-stream and continues', async () => {
    const { fake, adapter, message, reply } = await cardReply();
    reply.update('first part');
    await fake.waitFor(() => cardOf(fake, adapter, message)?.text === 'first part');
    fake.expireTokens();
    reply.update('first part, second part');
    await fake.waitFor(() => cardOf(fake, adapter, message)?.text === 'first part, second part', 5000);
    await reply.finish('all parts');
    expect(cardOf(fake, adapter, message)).toMatchObject({ text: 'all parts', isFinalized: true });
    expect(fake.calls.filter((c) => c.path === '/v1.0/oauth2/accessToken')).toHaveLength(2);
    expect(fake.calls.filter((c) => c.status === 401)).toHaveLength(1);
  });

  it('falls back to markdown when the card stream answers a business error on the final', async () => {
    const { fake, adapter, message, reply } = await cardReply();
    fake.failNext('/v1.0/card/streaming', { kind: 'business', code: 'card.streamingFailed' }, 2);
    await reply.finish('final text');
    expect(fake.botMessages(ALICE).at(-1)).toMatchObject({ kind: 'markdown', text: 'final text' });
    expect(cardOf(fake, adapter, message)?.text).toBe('⏳ Working on it...');
  });

  it('acknowledges with text when the card cannot be created, and answers in markdown', async () => {
    const { fake, intake, adapter } = await started({ hasCards: true });
    fake.failNext('/v1.0/card/instances/createAndDeliver', { kind: 'business', code: 'card.templateNotFound' }, 3);
    await fake.sendUserMessage({ chat: 'group', userId: ALICE, text: 'hello' });
    const message = await committedOne(intake);
    expect(message.replyTo.placeholderId).toBeUndefined();
    const reply = adapter.egress.reply(targetOf(message));
    reply.update('partial');
    await reply.finish('answer');
    expect(fake.botMessages('cidGROUP1').map((m) => [m.kind, m.text])).toEqual([
      ['text', '⏳ Working on it...'],
      ['markdown', 'answer'],
    ]);
  });

  it('finishes the reply when the stream connection drops mid-stream, and reconnects', async () => {
    const { fake, adapter, message, reply, intake } = await cardReply();
    reply.update('before the drop');
    fake.dropConnections();
    reply.update('after the drop');
    await reply.finish('complete answer');
    expect(cardOf(fake, adapter, message)).toMatchObject({ text: 'complete answer', isFinalized: true });
    await fake.waitFor(() => fake.connectionsOpened === 2, 5000);
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'still here' });
    expect((await committedOne(intake, 2)).text).toBe('still here');
  });

  it('finalizes the card even when the final text is what it already shows', async () => {
    const { fake, adapter, message, reply } = await cardReply();
    reply.update('same text');
    await fake.waitFor(() => cardOf(fake, adapter, message)?.text === 'same text');
    await reply.finish('same text');
    expect(cardOf(fake, adapter, message)).toMatchObject({ text: 'same text', isFinalized: true });
  });
});
