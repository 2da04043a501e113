import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { wechatChannel } from '../../../channels/wechat/index.js';
import type { ChannelFiles, InboundFile, InboundMessage, OutboundFile, ReplyTarget } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeWeChat, type UserMessageInput } from '../../fakes/wechat/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { weChatTestConfig } from '../../helpers/wechat-config.js';

/**
 * Images and files through the WeChat adapter and FakeWeChat: what reaches the intake, the bytes
 * a download returns after AES-128-ECB decryption (each key encoding seen on the wire), the
 * reasons people read when it cannot, and what the person's chat shows when the bot sends one.
 */

const ALICE = 'alice@im.wechat';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startWeChat(overrides: Record<string, unknown> = {}) {
  const fake = new FakeWeChat({ longPollHoldMs: 200 });
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const config = weChatTestConfig(fake, { polling_retry_delay: 0.1, ...overrides });
  const adapter = await wechatChannel.create(config, testChannelDeps({ intake, commands: [], logger: silentLogger() }));
  cleanups.push(() => adapter.stop());
  await adapter.start();
  const files: ChannelFiles | undefined = adapter.files;
  if (!files) throw new Error('the WeChat adapter has no files');
  return { fake, intake, adapter, files };
}

/** A person sends `input`; resolves with what reached the intake. */
async function received(started: Awaited<ReturnType<typeof startWeChat>>, input: Omit<UserMessageInput, 'userId'>): Promise<InboundMessage> {
  const sent = started.fake.sendUserMessage({ userId: ALICE, ...input });
  await started.intake.waitUntil(() => started.intake.committed.some((m) => m.messageId === sent.messageId));
  return started.intake.committed.find((m) => m.messageId === sent.messageId) as InboundMessage;
}

function onlyFile(message: InboundMessage): InboundFile {
  expect(message.files).toHaveLength(1);
  return message.files?.[0] as InboundFile;
}

function hostFile(name: string, bytes: Uint8Array, mimeType: string, isImage: boolean): OutboundFile {
  const dir = mkdtempSync(join(tmpdir(), 'wechat-out-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const hostPath = join(dir, name);
  writeFileSync(hostPath, bytes);
  return { hostPath, name, mimeType, isImage, size: bytes.byteLength };
}

function targetOf(message: InboundMessage): ReplyTarget {
  return { chatId: message.chatId, isPrivateChat: true, replyTo: message.replyTo, ...(message.platformData ? { platformData: message.platformData } : {}) };
}

describe('WeChat files in', () => {
  for (const keyEncoding of ['hex-field', 'base64-raw', 'base64-hex'] as const) {
    it(`downloads and decrypts an image whose key is sent as ${keyEncoding}`, async () => {
      const started = await startWeChat();
      const bytes = randomBytes(70_001);
      const message = await received(started, { image: { bytes, keyEncoding }, text: 'what is this?' });
      const file = onlyFile(message);
      expect(message.text).toBe('what is this?');
      expect(file).toMatchObject({ isImage: true, mimeType: 'image/jpeg', declaredSize: bytes.length });
      expect(Buffer.from(await started.files.download(file))).toEqual(bytes);
    });
  }

  it('downloads a document with an allowed extension, keeping its name; a file alone is chat with empty text', async () => {
    const started = await startWeChat();
    const bytes = Buffer.from('%PDF-1.7 fake report\n'.repeat(500));
    const message = await received(started, { file: { bytes, name: 'report.pdf' } });
    const file = onlyFile(message);
    expect([message.kind, message.text]).toEqual(['chat', '']);
    expect(file).toMatchObject({ name: 'report.pdf', mimeType: 'application/pdf', isImage: false, declaredSize: bytes.length });
    expect(Buffer.from(await started.files.download(file))).toEqual(bytes);
  });

  it('refuses a file type outside allowed_file_extensions, and files over the cap whatever their declared size', async () => {
    const started = await startWeChat({ max_inbound_file_bytes: 4096 });
    const exe = onlyFile(await received(started, { file: { bytes: randomBytes(100), name: 'setup.exe' } }));
    await expect(started.files.download(exe)).rejects.toMatchObject({ code: 'FILE_UNAVAILABLE', userMessage: 'file type not allowed' });
    const declared = onlyFile(await received(started, { file: { bytes: randomBytes(5000), name: 'big.txt' } }));
    await expect(started.files.download(declared)).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    const downloadsBefore = started.fake.calls.filter((c) => c.path === '/c2c/download').length;
    expect(downloadsBefore).toBe(0);
    const underDeclared = onlyFile(await received(started, { file: { bytes: randomBytes(5000), name: 'sneaky.txt', declaredSize: 10 } }));
    await expect(started.files.download(underDeclared)).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
  });

  it('reads a voice note by its transcript', async () => {
    const started = await startWeChat();
    const message = await received(started, { voiceText: '帮我查一下天气' });
    expect([message.text, message.files]).toEqual(['帮我查一下天气', undefined]);
  });
});

describe('WeChat files out', () => {
  it('uploads an image encrypted through getuploadurl and the CDN; the chat shows it as a picture with the same bytes', async () => {
    const started = await startWeChat();
    const message = await received(started, { text: 'draw me something' });
    const bytes = randomBytes(33_333);
    await started.files.send(targetOf(message), hostFile('chart.png', bytes, 'image/png', true));
    const [shown] = started.fake.botMessages(ALICE).filter((m) => m.attachment);
    expect(shown?.attachment?.kind).toBe('image');
    expect(Buffer.from(shown?.attachment?.bytes ?? [])).toEqual(bytes);
    expect(shown?.replyTo).toBe(message.messageId);
    // What went to the CDN was ciphertext, never the picture itself.
    const upload = started.fake.calls.find((c) => c.path === '/c2c/upload');
    expect(upload).toBeDefined();
    expect([...started.fake.uploads.values()][0]?.encrypted.includes(bytes.subarray(0, 64))).toBe(false);
  });

  it('sends a document with its name; refuses a type not allowed and one over the cap without uploading', async () => {
    const started = await startWeChat({ max_outbound_file_bytes: 10_000 });
    const message = await received(started, { text: 'report please' });
    const bytes = Buffer.from('name,qty\napple,3\n');
    await started.files.send(targetOf(message), hostFile('fruit.csv', bytes, 'text/csv', false));
    const shown = started.fake.botMessages(ALICE).find((m) => m.attachment);
    expect(shown?.attachment).toEqual({ kind: 'file', name: 'fruit.csv', bytes });
    await expect(started.files.send(targetOf(message), hostFile('tool.exe', randomBytes(10), 'application/octet-stream', false))).rejects.toMatchObject({
      userMessage: 'file type not allowed',
    });
    await expect(started.files.send(targetOf(message), hostFile('huge.txt', randomBytes(20_000), 'text/plain', false))).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(started.fake.calls.filter((c) => c.path === '/ilink/bot/getuploadurl')).toHaveLength(1);
  });
});
