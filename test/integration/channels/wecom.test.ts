import { truncate, writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWeComChannel } from '../../../channels/wecom/adapter.js';
import { wecomChannel } from '../../../channels/wecom/index.js';
import type { ChannelAdapter, InboundFile, InboundMessage, OutboundFile, ReplyTarget } from '../../../src/channel/types.js';
import { InProcessTopic, type Topic } from '../../../src/channel/topic.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeWeCom } from '../../fakes/wecom/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/** The real adapter and `@wecom/aibot-node-sdk` against FakeWeCom: files both ways, and the faults of issue #19. */

const ALICE = 'alice.zhang';
const WORKING = 'Working on it...';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startFake(): Promise<FakeWeCom> {
  const fake = new FakeWeCom();
  await fake.start();
  cleanups.push(() => fake.stop());
  return fake;
}

async function startAdapter(fake: FakeWeCom, options: { secret?: string; isStarted?: boolean; topic?: Topic } = {}) {
  const intake = new RecordingIntake();
  const config = wecomChannel.configSchema.parse({ enabled: true, bot_id: fake.botId, bot_secret: options.secret ?? fake.secret, ws_url: fake.wsUrl });
  // A short reconnect base keeps the reconnect cases quick; the SDK doubles it per attempt.
  const topic = options.topic;
  const deps = testChannelDeps({ intake, commands: [], logger: silentLogger(), ...(topic ? { topic: () => topic } : {}) });
  const adapter = createWeComChannel(config, deps, { reconnectBaseMs: 50, relayTimeoutMs: 1000 });
  cleanups.push(() => adapter.stop());
  if (options.isStarted !== false) await adapter.start();
  return { intake, adapter };
}

async function started() {
  const fake = await startFake();
  return { fake, ...(await startAdapter(fake)) };
}

function targetOf(message: InboundMessage): ReplyTarget {
  return { chatId: message.chatId, isPrivateChat: message.isPrivateChat, replyTo: message.replyTo, ...(message.platformData ? { platformData: message.platformData } : {}) };
}

async function committed(intake: RecordingIntake, count = 1): Promise<InboundMessage> {
  await intake.waitUntil(() => intake.committed.length >= count);
  return intake.committed[count - 1] as InboundMessage;
}

async function outboundFile(name: string, bytes: Uint8Array | number, isImage: boolean): Promise<OutboundFile> {
  const dir = await mkdtemp(join(tmpdir(), 'wecom-out-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const hostPath = join(dir, name);
  if (typeof bytes === 'number') {
    await writeFile(hostPath, '');
    await truncate(hostPath, bytes);
  } else {
    await writeFile(hostPath, bytes);
  }
  const size = typeof bytes === 'number' ? bytes : bytes.byteLength;
  return { hostPath, name, mimeType: isImage ? 'image/png' : 'application/pdf', isImage, size };
}

describe('WeCom files', () => {
  it('hands over an image and a file with the reference texts, and downloads them decrypted', async () => {
    const { fake, intake, adapter } = await started();
    const picture = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const document = new TextEncoder().encode('report body '.repeat(100));
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, msgtype: 'image', media: picture });
    await fake.sendUserMessage({ chat: 'group', userId: ALICE, msgtype: 'file', media: document });
    const image = await committed(intake, 1);
    const file = await committed(intake, 2);
    expect(image).toMatchObject({ text: '（receive image ）', files: [{ isImage: true }] });
    expect(file).toMatchObject({ text: '（receive file）', chatId: 'wrGROUP1', files: [{ isImage: false }] });
    expect(await adapter.files?.download(image.files?.[0] as InboundFile)).toEqual(Buffer.from(picture));
    expect(Buffer.from((await adapter.files?.download(file.files?.[0] as InboundFile)) as Uint8Array).toString()).toBe('report body '.repeat(100));
  });

  it('says a file could not be downloaded when WeCom answers 5xx', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, msgtype: 'file', media: new Uint8Array([1, 2, 3]) });
    const message = await committed(intake);
    fake.failDownloads(502);
    await expect(adapter.files?.download(message.files?.[0] as InboundFile)).rejects.toMatchObject({ code: 'FILE_UNAVAILABLE', userMessage: 'File could not be downloaded.' });
    expect(fake.downloads.map((d) => d.status)).toEqual([502]);
  });

  it('sends an image up to 2 MiB as an image, a larger one as a file in 512 KiB chunks, and refuses over 20 MiB', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'draw me something' });
    const target = targetOf(await committed(intake));
    const small = new Uint8Array(100_000).map((_, i) => i % 251);
    await adapter.files?.send(target, await outboundFile('chart.png', small, true));
    const large = new Uint8Array(2 * 1024 * 1024 + 1).map((_, i) => i % 241);
    await adapter.files?.send(target, await outboundFile('photo.png', large, true));
    const huge = await outboundFile('huge.pdf', 20 * 1024 * 1024 + 1, false);
    await expect(adapter.files?.send(target, huge)).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    const sent = fake.botMessages(ALICE).filter((m) => m.kind === 'image' || m.kind === 'file');
    expect(sent.map((m) => [m.kind, m.fileName])).toEqual([
      ['image', 'chart.png'],
      ['file', 'photo.png'],
    ]);
    // Buffer.equals: a deep comparison of 2 MiB element by element would take seconds.
    expect(fake.uploads.get(sent[0]?.mediaId as string)?.bytes.equals(small)).toBe(true);
    expect(fake.uploads.get(sent[1]?.mediaId as string)?.bytes.equals(large)).toBe(true);
    // 1 chunk for the image, 5 for the 2 MiB + 1 byte file; none for the refused one.
    expect(fake.framesOf('aibot_upload_media_chunk')).toHaveLength(6);
    expect(fake.framesOf('aibot_upload_media_init')).toHaveLength(2);
  });
});

describe('WeCom faults', () => {
  it('delivers the final as markdown when the stream is past WeCom\'s 6 minutes', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'a slow question' });
    const reply = adapter.egress.reply(targetOf(await committed(intake)));
    fake.expireStreams();
    await reply.finish('the late answer');
    expect(fake.botMessages(ALICE).map((m) => [m.kind, m.text])).toEqual([
      ['stream', WORKING],
      ['markdown', 'the late answer'],
    ]);
  });

  it('delivers the final as markdown when WeCom answers the stream frame with an error', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'question' });
    const reply = adapter.egress.reply(targetOf(await committed(intake)));
    fake.failNext('aibot_respond_msg', { kind: 'errcode', errcode: -1, errmsg: 'system busy' });
    await reply.finish('the answer');
    expect(fake.botMessages(ALICE).filter((m) => m.kind === 'markdown').map((m) => m.text)).toEqual(['the answer']);
  });

  it('sends the final again on its stream when WeCom never acknowledged it (the SDK gives up after 5 s)', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'question' });
    const reply = adapter.egress.reply(targetOf(await committed(intake)));
    fake.failNext('aibot_respond_msg', { kind: 'silent' });
    await reply.finish('the answer');
    expect(fake.botMessages(ALICE).map((m) => [m.kind, m.history, m.isFinished])).toEqual([['stream', [WORKING, 'the answer'], true]]);
    expect(fake.framesOf('aibot_respond_msg').map((f) => (f.body.stream as { content: string }).content)).toEqual([WORKING, 'the answer', 'the answer']);
  });

  it('finishes the same stream after the socket dropped mid-answer and the SDK reconnected', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'question' });
    const reply = adapter.egress.reply(targetOf(await committed(intake)));
    fake.failNext('aibot_respond_msg', { kind: 'drop' });
    reply.update('a partial lost with the socket');
    await fake.waitFor(() => fake.connectionsOpened === 2 && fake.isAuthenticated(), 10_000);
    await reply.finish('the whole answer');
    expect(fake.botMessages(ALICE).map((m) => [m.kind, m.history, m.isFinished])).toEqual([['stream', [WORKING, 'the whole answer'], true]]);
  });

  it('leaves the stream open when the final could not be sent, so the outbox\'s later attempt finishes the same stream', async () => {
    const { fake, intake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'question' });
    const target = targetOf(await committed(intake));
    const reply = adapter.egress.reply(target);
    // The connection goes (the process lost its lease) and nobody else holds it.
    await adapter.stop();
    await expect(reply.finish('the answer')).rejects.toMatchObject({ code: 'CHANNEL_UNAVAILABLE' });
    expect(fake.botMessages(ALICE).map((m) => [m.text, m.isFinished])).toEqual([[WORKING, false]]);
    await adapter.start();
    await adapter.egress.reply({ ...target, replyTo: reply.resumeAnchor?.() ?? target.replyTo }).finish('the answer');
    expect(fake.botMessages(ALICE).map((m) => [m.kind, m.history, m.isFinished])).toEqual([['stream', [WORKING, 'the answer'], true]]);
  });

  it('sends only the final, as markdown, for a message without a callback to answer (a scheduled one)', async () => {
    const { fake, adapter } = await started();
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'remind me daily' });
    const reply = adapter.egress.reply({ chatId: ALICE, isPrivateChat: true, replyTo: {} });
    reply.update('partial that is never shown');
    await reply.finish('your daily reminder');
    expect(fake.botMessages(ALICE).filter((m) => m.kind === 'markdown').map((m) => m.history)).toEqual([['your daily reminder']]);
  });

  it('acknowledges a message WeCom calls back twice once, and hands it over once', async () => {
    const { fake, intake } = await started();
    const first = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'only once' });
    await committed(intake);
    await fake.redeliver(first.msgid);
    const next = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'next' });
    await committed(intake, 2);
    expect(intake.committed.map((m) => m.messageId)).toEqual([first.msgid, next.msgid]);
    expect(fake.botMessages(ALICE).map((m) => m.replyTo)).toEqual([first.msgid, next.msgid]);
  });

  it('drops a malformed callback with nothing said, and keeps serving', async () => {
    const { fake, intake } = await started();
    const socket = await fake.waitFor(() => (fake as unknown as { authenticated?: { send(data: string): void } }).authenticated);
    socket.send(JSON.stringify({ cmd: 'aibot_msg_callback', headers: { req_id: 'bad1' }, body: { msgid: 'x', msgtype: 'text', from: 'nobody' } }));
    socket.send('{ not json');
    const kept = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'a real question' });
    expect((await committed(intake)).messageId).toBe(kept.msgid);
    expect(intake.committed).toHaveLength(1);
    expect(fake.chats.all().map((m) => m.replyTo)).toEqual([kept.msgid]);
  });

  it('refuses to start on credentials WeCom rejects, and says why', async () => {
    const fake = await startFake();
    const { adapter } = await startAdapter(fake, { secret: 'wrong-secret', isStarted: false });
    await expect(adapter.start()).rejects.toMatchObject({ code: 'CHANNEL_UNAUTHORIZED' });
    expect(adapter.status()).toMatchObject({ running: false });
  });

  it('reconnects after a dropped socket even when WeCom first refuses the subscription, and answers again', async () => {
    const { fake, intake } = await started();
    fake.refuseAuth(1);
    fake.dropConnections();
    await fake.waitFor(() => fake.isAuthenticated(), 10_000);
    expect(fake.framesOf('aibot_subscribe').map((f) => f.errcode)).toEqual([0, 40058, 0]);
    const after = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'still there?' });
    expect((await committed(intake)).messageId).toBe(after.msgid);
  });

  it('stops running when a newer connection of the same bot takes over (one connection per bot)', async () => {
    const fake = await startFake();
    const first = await startAdapter(fake);
    const second = await startAdapter(fake);
    await fake.waitFor(() => first.adapter.status().running === false);
    expect(first.adapter.status()).toEqual({ running: false, reason: 'replaced by a newer connection of the same bot' });
    expect(second.adapter.status()).toEqual({ running: true });
    const message = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'who answers?' });
    expect((await committed(second.intake)).messageId).toBe(message.msgid);
    expect(first.intake.committed).toEqual([]);
  });

  it('declares its ingress exclusive, so scaled out only the lease holder opens the connection', async () => {
    const fake = await startFake();
    const { adapter } = await startAdapter(fake, { isStarted: false });
    expect((adapter as ChannelAdapter).exclusiveIngress).toBe(true);
  });

  it('delivers a reply made in a process without the connection through the process holding it', async () => {
    const fake = await startFake();
    const topic = new InProcessTopic();
    const holder = await startAdapter(fake, { topic });
    const standby = await startAdapter(fake, { topic, isStarted: false });
    await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'who answers?' });
    const target = targetOf(await committed(holder.intake));
    const reply = standby.adapter.egress.reply(target);
    reply.update('half an answer');
    await fake.waitFor(() => fake.botMessages(ALICE).some((m) => m.text === 'half an answer'));
    await reply.finish('the whole answer');
    expect(fake.botMessages(ALICE).map((m) => [m.kind, m.history, m.isFinished])).toEqual([['stream', [WORKING, 'half an answer', 'the whole answer'], true]]);
    expect(fake.connectionsOpened).toBe(1);
    await expect(standby.adapter.files?.send(target, await outboundFile('chart.png', new Uint8Array([1]), true))).rejects.toMatchObject({ code: 'CHANNEL_UNAVAILABLE' });
  });

  it('fails a reply as unavailable when no process holds the connection, so the outbox sends it later', async () => {
    const fake = await startFake();
    const standby = await startAdapter(fake, { topic: new InProcessTopic(), isStarted: false });
    const reply = standby.adapter.egress.reply({ chatId: ALICE, isPrivateChat: true, replyTo: { messageId: 'm1' }, platformData: { reqId: 'req1' } });
    await expect(reply.finish('nobody to send it')).rejects.toMatchObject({ code: 'CHANNEL_UNAVAILABLE' });
    expect(fake.frames).toEqual([]);
  });
});
