import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { Bot } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { createTelegramFiles } from '../../../channels/telegram/files.js';
import { telegramChannel } from '../../../channels/telegram/index.js';
import { InProcessRateGate } from '../../../src/channel/rate-gate.js';
import type { ChannelFiles, InboundFile, InboundMessage, OutboundFile, ReplyTarget } from '../../../src/channel/types.js';
import { createLogger, silentLogger } from '../../../src/logger.js';
import { type FakeDocumentInput, FakeTelegram } from '../../fakes/telegram/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { GroupPacer } from '../../../channels/telegram/pacing.js';
import { InProcessRequestWindow } from '../../../src/channel/request-window.js';

/**
 * Photos and documents through the real grammY adapter and FakeTelegram: what reaches the intake,
 * the bytes a download returns, the reasons users read when it cannot, and what lands in the chat
 * when the bot sends a file.
 */

const PRIVATE = 777;
const GROUP = -1001234567890;
const WORKING = 'Working on it...';
const REASONS = {
  tooLarge: 'exceeds the 20 MB download limit',
  unavailable: 'download unavailable',
  failed: 'download failed',
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startTelegram() {
  const fake = new FakeTelegram();
  await fake.start();
  cleanups.push(() => fake.stop());
  const logs: string[] = [];
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void logs.push(line) } });
  const intake = new RecordingIntake();
  const config = telegramChannel.configSchema.parse({
    enabled: true,
    bot_token: fake.token,
    api_root: fake.apiRoot,
    polling_timeout_seconds: 1,
  });
  const adapter = await telegramChannel.create(config, testChannelDeps({ intake, commands: [], logger }));
  cleanups.push(() => adapter.stop());
  await adapter.start();
  const files: ChannelFiles | undefined = adapter.files;
  if (!files) throw new Error('the Telegram adapter has no files');
  return { fake, intake, adapter, files, logs };
}

/** A user sends a document; resolves with what reached the intake. */
async function inboundDocument(fake: FakeTelegram, intake: RecordingIntake, document: FakeDocumentInput, caption?: string) {
  fake.sendUserDocument({ chatId: PRIVATE, chatType: 'private', document, ...(caption === undefined ? {} : { caption }) });
  const committed = await intake.waitForCommits(intake.committed.length + 1);
  const inbound = committed.at(-1) as InboundMessage;
  return { inbound, file: inbound.files?.[0] as InboundFile };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error('expected a rejection');
}

/** Nothing a user or an operator reads may hold the token, the file id, or a file path. */
function expectNoSecrets(texts: string[], fake: FakeTelegram, fileId: string): void {
  const joined = texts.join('\n');
  const secretPart = fake.token.split(':')[1] ?? fake.token;
  expect(joined).not.toContain(secretPart);
  expect(joined).not.toContain(fileId);
  expect(joined).not.toMatch(/(photos|documents)\/file_\d+/);
  expect(joined).not.toContain('/file/bot');
}

describe('Telegram inbound files', () => {
  it('takes the largest photo size, with the caption as text, and downloads its exact bytes', async () => {
    const { fake, intake, files } = await startTelegram();
    const largest = randomBytes(3000);
    const sent = fake.sendUserPhoto({
      chatId: PRIVATE,
      chatType: 'private',
      caption: 'what is in this picture?',
      photo: [
        { width: 90, height: 60, bytes: randomBytes(100) },
        { width: 800, height: 600, bytes: randomBytes(2000) },
        // Same pixel count as the one before; the bigger file wins.
        { width: 600, height: 800, bytes: largest },
        { width: 320, height: 240, bytes: randomBytes(500) },
      ],
    });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound).toMatchObject({ text: 'what is in this picture?', kind: 'chat' });
    expect(inbound?.files).toEqual([
      { name: `telegram-photo-${sent.message_id}.jpg`, mimeType: 'image/jpeg', isImage: true, declaredSize: 3000, ref: expect.any(String) },
    ]);
    expect(fake.botMessages(PRIVATE).map((m) => [m.text, m.replyTo])).toEqual([[WORKING, sent.message_id]]);
    const bytes = await files.download(inbound?.files?.[0] as InboundFile);
    expect(Buffer.from(bytes).equals(largest)).toBe(true);
  });

  it('forwards a photo without a caption as chat with empty text', async () => {
    const { fake, intake } = await startTelegram();
    fake.sendUserPhoto({ chatId: GROUP, chatType: 'supergroup', photo: [{ width: 10, height: 10, bytes: randomBytes(10) }] });
    const [inbound] = await intake.waitForCommits(1);
    expect(inbound).toMatchObject({ text: '', kind: 'chat', isPrivateChat: false });
    expect(inbound?.files).toHaveLength(1);
    expect(inbound?.replyTo.placeholderId).toBeDefined();
  });

  it('keeps a document’s name and MIME type, and downloads its exact bytes', async () => {
    const { fake, intake, files } = await startTelegram();
    const content = randomBytes(300 * 1024);
    const { inbound, file } = await inboundDocument(
      fake,
      intake,
      { bytes: content, fileName: 'Q3 report (final).pdf', mimeType: 'application/pdf' },
      'summarize this',
    );
    expect(inbound.text).toBe('summarize this');
    expect(inbound.files).toEqual([
      { name: 'Q3 report (final).pdf', mimeType: 'application/pdf', isImage: false, declaredSize: content.length, ref: expect.any(String) },
    ]);
    expect(Buffer.from(await files.download(file)).equals(content)).toBe(true);
  });

  it('names a document without a usable name after its message, typed application/octet-stream', async () => {
    const { fake, intake } = await startTelegram();
    const unnamed = fake.sendUserDocument({ chatId: PRIVATE, chatType: 'private', document: { bytes: randomBytes(8) } });
    fake.sendUserDocument({ chatId: PRIVATE, chatType: 'private', document: { bytes: randomBytes(8), fileName: '../../etc/passwd' } });
    const dotDot = fake.sendUserDocument({ chatId: PRIVATE, chatType: 'private', document: { bytes: randomBytes(8), fileName: '..' } });
    fake.sendUserDocument({
      chatId: PRIVATE,
      chatType: 'private',
      document: { bytes: randomBytes(8), fileName: 'scan.png', mimeType: 'image/png' },
    });
    await intake.waitForCommits(4);
    expect(intake.committed.map((m) => m.files?.map((f) => [f.name, f.mimeType, f.isImage]))).toEqual([
      [[`telegram-document-${unnamed.message_id}.bin`, 'application/octet-stream', false]],
      [['passwd', 'application/octet-stream', false]],
      [[`telegram-document-${dotDot.message_id}.bin`, 'application/octet-stream', false]],
      [['scan.png', 'image/png', true]],
    ]);
  });

  it('ignores a message with neither text nor a photo or document', async () => {
    const { fake, intake } = await startTelegram();
    const chat = { id: PRIVATE, type: 'private' as const, first_name: 'Alice' };
    fake.pushUpdate({
      message: {
        message_id: 500,
        date: Math.floor(Date.now() / 1000),
        chat,
        from: { id: PRIVATE, is_bot: false, first_name: 'Alice' },
        sticker: { file_id: 'sticker', file_unique_id: 's', type: 'regular', width: 512, height: 512, is_animated: false, is_video: false },
      },
    } as Parameters<FakeTelegram['pushUpdate']>[0]);
    fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'after the sticker' });
    await intake.waitForCommits(1);
    expect(intake.committed.map((m) => m.text)).toEqual(['after the sticker']);
    expect(fake.botMessages(PRIVATE).map((m) => m.text)).toEqual([WORKING]);
  });
});

describe('Telegram file download limits and failures', () => {
  /** Sends the document, tries to download it, and checks that nothing secret leaked. */
  async function failedDownload(document: FakeDocumentInput) {
    const started = await startTelegram();
    const { file } = await inboundDocument(started.fake, started.intake, document);
    const error = await rejection(started.files.download(file));
    expect(started.logs.join('')).toContain('Telegram file not downloaded');
    expectNoSecrets([...started.logs, inspect(error, { depth: 10 }), String((error as { userMessage?: string }).userMessage)], started.fake, file.ref);
    return { ...started, error, file };
  }

  it('refuses a declared size over 20,000,000 bytes without asking Telegram', async () => {
    const { fake, error } = await failedDownload({ bytes: randomBytes(16), fileName: 'huge.zip', declaredSize: 20_000_001 });
    expect(error).toMatchObject({ name: 'ChannelError', code: 'FILE_TOO_LARGE', userMessage: REASONS.tooLarge });
    expect(fake.callsTo('getFile')).toEqual([]);
  });

  it('accepts exactly 20,000,000 declared bytes', async () => {
    const { fake, intake, files } = await startTelegram();
    const content = randomBytes(64);
    const { file } = await inboundDocument(fake, intake, { bytes: content, declaredSize: 20_000_000, resolvedSize: 64 });
    expect(Buffer.from(await files.download(file)).equals(content)).toBe(true);
  });

  it('refuses when getFile answers "file is too big"', async () => {
    const { fake, error } = await failedDownload({ bytes: randomBytes(16), declaredSize: null, getFile: 'too-big' });
    expect(error).toMatchObject({ code: 'FILE_TOO_LARGE', userMessage: REASONS.tooLarge });
    expect(fake.downloads).toEqual([]);
  });

  it('refuses when getFile resolves a size over the limit, without downloading', async () => {
    const { fake, error } = await failedDownload({
      bytes: randomBytes(16),
      declaredSize: null,
      resolvedSize: 25_000_000,
      getFile: 'answer',
    });
    expect(error).toMatchObject({ code: 'FILE_TOO_LARGE', userMessage: REASONS.tooLarge });
    expect(fake.callsTo('getFile')).toHaveLength(1);
    expect(fake.downloads).toEqual([]);
  });

  it.each([
    ['chunked, so only counting can tell', 'chunked'],
    ['with a content-length that gives it away', 'bytes'],
  ] as const)('stops a download that passes 20,000,000 bytes although Telegram said 1,000 (%s)', async (_how, serve) => {
    const { fake, error } = await failedDownload({
      bytes: new Uint8Array(20_000_001),
      declaredSize: 1000,
      resolvedSize: 1000,
      getFile: 'answer',
      serve,
    });
    expect(error).toMatchObject({ code: 'FILE_TOO_LARGE', userMessage: REASONS.tooLarge });
    expect(fake.downloads.map((d) => d.status)).toEqual([200]);
  });

  it('reports "download unavailable" when getFile refuses the file id', async () => {
    const { fake, intake, files, logs } = await startTelegram();
    const { file } = await inboundDocument(fake, intake, { bytes: randomBytes(16) });
    const unknown = { ...file, ref: 'BQACAgIAAxkBAAIUnKnOwNfIlEiD' };
    const error = await rejection(files.download(unknown));
    expect(error).toMatchObject({ code: 'FILE_UNAVAILABLE', userMessage: REASONS.unavailable });
    expect(fake.callsTo('getFile').map((c) => c.response)).toEqual([
      { ok: false, errorCode: 400, description: 'Bad Request: invalid file_id' },
    ]);
    expectNoSecrets([...logs, inspect(error, { depth: 10 })], fake, unknown.ref);
  });

  it('reports "download unavailable" when getFile gives no file_path', async () => {
    const { error } = await failedDownload({ bytes: randomBytes(16), getFile: 'no-path' });
    expect(error).toMatchObject({ code: 'FILE_UNAVAILABLE', userMessage: REASONS.unavailable });
  });

  it('reports "download failed" when the download answers HTTP 500', async () => {
    const { fake, error } = await failedDownload({ bytes: randomBytes(16), serve: 500 });
    expect(error).toMatchObject({ code: 'FILE_UNAVAILABLE', userMessage: REASONS.failed });
    expect(fake.downloads.map((d) => d.status)).toEqual([500]);
  });

  it('gives up a download that stalls past its timeout ("download failed")', async () => {
    const { fake, intake } = await startTelegram();
    const { file } = await inboundDocument(fake, intake, { bytes: randomBytes(1000), serve: 'stall' });
    // The adapter's 20 s is not configurable; the same class with a short timeout.
    const files = createTelegramFiles({
      api: new Bot(fake.token, { client: { apiRoot: fake.apiRoot } }).api,
      token: fake.token,
      apiRoot: fake.apiRoot,
      gate: new InProcessRateGate(),
      pacer: new GroupPacer(new InProcessRequestWindow(20, 60_000)),
      logger: silentLogger(),
      downloadTimeoutMs: 300,
    });
    const startedAt = Date.now();
    const error = await rejection(files.download(file));
    expect(error).toMatchObject({ code: 'FILE_UNAVAILABLE', userMessage: REASONS.failed });
    expect(error.message).toContain('timed out');
    expect(Date.now() - startedAt).toBeLessThan(3000);
  });

  it('rejects with the caller’s reason when the caller aborts', async () => {
    const { fake, intake, files } = await startTelegram();
    const { file } = await inboundDocument(fake, intake, { bytes: randomBytes(16) });
    const abort = new AbortController();
    const reason = new Error('worker shutting down');
    abort.abort(reason);
    expect(await rejection(files.download(file, abort.signal))).toBe(reason);
  });
});

describe('Telegram files out', () => {
  async function acknowledged() {
    const started = await startTelegram();
    const sent = started.fake.sendUserMessage({ chatId: PRIVATE, chatType: 'private', text: 'make me files' });
    const [inbound] = await started.intake.waitForCommits(1);
    if (!inbound) throw new Error('no inbound message');
    const target: ReplyTarget = { chatId: inbound.chatId, isPrivateChat: true, replyTo: inbound.replyTo };
    const dir = mkdtempSync(join(tmpdir(), 'dfc-telegram-files-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const outputFile = (name: string, mimeType: string, content: Buffer | number): OutboundFile => {
      const hostPath = join(dir, name);
      if (typeof content === 'number') {
        writeFileSync(hostPath, '');
        truncateSync(hostPath, content); // Sparse: the size without the disk use.
      } else {
        writeFileSync(hostPath, content);
      }
      const size = typeof content === 'number' ? content : content.length;
      return { hostPath, name, mimeType, isImage: mimeType.startsWith('image/'), size };
    };
    return { ...started, target, userMessageId: sent.message_id, outputFile };
  }

  it('sends a small PNG as a photo replying to the user’s message', async () => {
    const { fake, files, target, userMessageId, outputFile } = await acknowledged();
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(2048)]);
    await files.send(target, outputFile('chart.png', 'image/png', png));
    expect(fake.uploads.map(({ method, fileName, replyTo }) => ({ method, fileName, replyTo }))).toEqual([
      { method: 'sendPhoto', fileName: 'chart.png', replyTo: userMessageId },
    ]);
    expect(fake.uploads[0]?.bytes.equals(png)).toBe(true);
    expect(fake.botMessages(PRIVATE).at(-1)).toMatchObject({ attachment: { kind: 'photo' }, replyTo: userMessageId });
  });

  it('sends a PDF as a document under its name, bytes intact', async () => {
    const { fake, files, target, outputFile } = await acknowledged();
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(100_000)]);
    await files.send(target, outputFile('Q3 report (final) é.pdf', 'application/pdf', pdf));
    expect(fake.uploads.map((u) => [u.method, u.fileName])).toEqual([['sendDocument', 'Q3 report (final) é.pdf']]);
    expect(fake.uploads[0]?.bytes.equals(pdf)).toBe(true);
    expect(fake.botMessages(PRIVATE).at(-1)?.attachment).toEqual({
      kind: 'document',
      fileName: 'Q3 report (final) é.pdf',
      size: pdf.length,
    });
  });

  it('sends an 11 MB image as a document (photos are capped at 10 MB)', async () => {
    const { fake, files, target, outputFile } = await acknowledged();
    await files.send(target, outputFile('poster.png', 'image/png', randomBytes(11_000_000)));
    expect(fake.callsTo('sendPhoto')).toEqual([]);
    expect(fake.uploads.map((u) => [u.method, u.fileName, u.bytes.length])).toEqual([['sendDocument', 'poster.png', 11_000_000]]);
  });

  it('sends an image as a document when Telegram refuses it as a photo', async () => {
    const { fake, files, target, outputFile } = await acknowledged();
    fake.failNext('sendPhoto', { errorCode: 400, description: 'Bad Request: PHOTO_INVALID_DIMENSIONS' });
    await files.send(target, outputFile('banner.png', 'image/png', randomBytes(1000)));
    expect(fake.uploads.map((u) => u.method)).toEqual(['sendDocument']);
  });

  it('does not resend a photo as a document when the bot was blocked', async () => {
    const { fake, files, target, outputFile } = await acknowledged();
    fake.failNext('sendPhoto', { errorCode: 403, description: 'Forbidden: bot was blocked by the user' });
    const error = await rejection(files.send(target, outputFile('banner.png', 'image/png', randomBytes(1000))));
    expect(error).toMatchObject({ code: 'CHANNEL_REJECTED' });
    expect(fake.callsTo('sendDocument')).toEqual([]);
  });

  it('refuses a 51 MB file without calling Telegram', async () => {
    const { fake, files, target, outputFile } = await acknowledged();
    const before = fake.calls.length;
    const error = await rejection(files.send(target, outputFile('dataset.zip', 'application/zip', 51_000_000)));
    expect(error).toMatchObject({ name: 'ChannelError', code: 'FILE_TOO_LARGE', userMessage: 'exceeds the 50 MB upload limit' });
    // Polling goes on meanwhile; nothing else may have been asked.
    expect(fake.calls.slice(before).filter((call) => call.method !== 'getUpdates')).toEqual([]);
  });

  it('waits out a 429 on sendDocument, then sends once', async () => {
    const { fake, files, target, outputFile } = await acknowledged();
    fake.failNext('sendDocument', { errorCode: 429, retryAfter: 1 });
    await files.send(target, outputFile('notes.txt', 'text/plain', Buffer.from('hello')));
    const [limited, retried] = fake.callsTo('sendDocument');
    expect(limited?.response).toMatchObject({ ok: false, errorCode: 429 });
    expect(retried?.response).toEqual({ ok: true });
    expect(retried!.at - limited!.at).toBeGreaterThanOrEqual(1000);
    expect(fake.uploads.map((u) => u.fileName)).toEqual(['notes.txt']);
    expect(fake.rateLimitViolations).toEqual([]);
  });

  it('sends without a reply when there is no message to answer', async () => {
    const { fake, files, target, outputFile } = await acknowledged();
    await files.send({ ...target, replyTo: {} }, outputFile('a.txt', 'text/plain', Buffer.from('a')));
    expect(fake.uploads.map((u) => u.replyTo)).toEqual([undefined]);
  });

  it('rejects with CHANNEL_REJECTED when Telegram refuses the document', async () => {
    const { fake, files, target, outputFile } = await acknowledged();
    fake.failNext('sendDocument', { errorCode: 403, description: 'Forbidden: bot was blocked by the user' });
    const error = await rejection(files.send(target, outputFile('a.txt', 'text/plain', Buffer.from('a'))));
    expect(error).toMatchObject({ name: 'ChannelError', code: 'CHANNEL_REJECTED' });
    expect(fake.uploads).toEqual([]);
  });
});

describe('FakeTelegram serves files like the Bot API', () => {
  it('answers getFile with a File and the download URL with the bytes, only for the right token', async () => {
    const fake = new FakeTelegram();
    await fake.start();
    cleanups.push(() => fake.stop());
    const content = randomBytes(32);
    const message = fake.sendUserDocument({ chatId: PRIVATE, chatType: 'private', document: { bytes: content, fileName: 'a.bin' } });
    const fileId = message.document?.file_id ?? '';
    const getFile = await fetch(`${fake.apiRoot}/bot${fake.token}/getFile`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ file_id: fileId }),
    });
    const { result } = (await getFile.json()) as { result: { file_path: string } };
    expect(result).toEqual({ file_id: fileId, file_unique_id: expect.any(String), file_size: 32, file_path: expect.stringMatching(/^documents\/file_\d+\.bin$/) });
    const download = await fetch(`${fake.apiRoot}/file/bot${fake.token}/${result.file_path}`);
    expect(download.headers.get('content-length')).toBe('32');
    expect(Buffer.from(await download.arrayBuffer()).equals(content)).toBe(true);
    expect((await fetch(`${fake.apiRoot}/file/bot1:wrong/${result.file_path}`)).status).toBe(404);
  });
});
