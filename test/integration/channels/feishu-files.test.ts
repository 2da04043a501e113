import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { feishuChannel } from '../../../channels/feishu/index.js';
import type { ChannelAdapter, ChannelFiles, InboundMessage, ReplyTarget } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeFeishu } from '../../fakes/feishu/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/** Files both ways: message resources in, image/file uploads out, with Feishu's size limits. */

const ALICE = 'ou_alice00000000000000000000000001';
const P2P = 'oc_p2p_alice';
const MIB = 1024 * 1024;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startFeishu() {
  const fake = new FakeFeishu();
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const config = feishuChannel.configSchema.parse({ enabled: true, app_id: fake.appId, app_secret: fake.appSecret, domain: fake.url });
  const adapter: ChannelAdapter = await feishuChannel.create(config, testChannelDeps({ intake, commands: [], logger: silentLogger() }));
  cleanups.push(() => adapter.stop());
  await adapter.start();
  return { fake, intake, adapter, files: adapter.files as ChannelFiles };
}

async function receive(started: Awaited<ReturnType<typeof startFeishu>>, messageType: string, content: Record<string, unknown>): Promise<InboundMessage> {
  const sent = started.fake.sendUserMessage({ chatId: P2P, chatType: 'p2p', openId: ALICE, messageType, content: JSON.stringify(content) });
  await started.intake.waitUntil(() => started.intake.committed.some((m) => m.messageId === sent.messageId));
  return started.intake.committed.find((m) => m.messageId === sent.messageId) as InboundMessage;
}

function outboundFile(name: string, bytes: Uint8Array, isImage: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'feishu-files-'));
  const hostPath = join(dir, name);
  writeFileSync(hostPath, bytes);
  return { hostPath, name, mimeType: isImage ? 'image/png' : 'application/pdf', isImage, size: bytes.byteLength };
}

describe('feishu files', () => {
  it('downloads an image someone sent from the message resources', async () => {
    const started = await startFeishu();
    const bytes = new Uint8Array([137, 80, 78, 71, 1, 2, 3]);
    started.fake.resources.set('img_v3_cat', bytes);
    const inbound = await receive(started, 'image', { image_key: 'img_v3_cat' });
    expect(inbound.files).toHaveLength(1);
    expect(await started.files.download(inbound.files?.[0] as NonNullable<InboundMessage['files']>[number])).toEqual(bytes);
  });

  it('refuses a resource over 30 MiB and reports one that is gone', async () => {
    const started = await startFeishu();
    started.fake.resources.set('file_big', new Uint8Array(30 * MIB + 1));
    const big = await receive(started, 'file', { file_key: 'file_big', file_name: 'big.bin' });
    await expect(started.files.download(big.files?.[0] as NonNullable<InboundMessage['files']>[number])).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    const gone = await receive(started, 'file', { file_key: 'file_gone', file_name: 'gone.bin' });
    await expect(started.files.download(gone.files?.[0] as NonNullable<InboundMessage['files']>[number])).rejects.toMatchObject({ code: 'FILE_UNAVAILABLE' });
  });

  it('uploads images and files and replies with them; skips ones over the limits', async () => {
    const started = await startFeishu();
    const inbound = await receive(started, 'text', { text: 'send me files' });
    const target: ReplyTarget = { chatId: P2P, isPrivateChat: true, replyTo: inbound.replyTo };
    await started.files.send(target, outboundFile('chart.png', new Uint8Array(1000), true));
    await started.files.send(target, outboundFile('report.pdf', new Uint8Array(2000), false));
    expect(started.fake.uploads.map((u) => u.isImage)).toEqual([true, false]);
    const sent = started.fake.botMessages(P2P).filter((m) => m.msgType === 'image' || m.msgType === 'file');
    expect(sent.map((m) => [m.msgType, m.replyTo])).toEqual([
      ['image', inbound.messageId],
      ['file', inbound.messageId],
    ]);
    await expect(started.files.send(target, { ...outboundFile('huge.png', new Uint8Array(1), true), size: 10 * MIB + 1 })).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    await expect(started.files.send(target, { ...outboundFile('huge.zip', new Uint8Array(1), false), size: 30 * MIB + 1 })).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(started.fake.uploads).toHaveLength(2);
  });
});
