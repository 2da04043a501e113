import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { slackChannel } from '../../../channels/slack/index.js';
import type { ChannelFiles, InboundMessage, OutboundFile } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeSlack } from '../../fakes/slack/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/** Files both ways through the real adapter and FakeSlack (file_share in, files.uploadV2 out). */

const ALICE = 'U0ALICE1';
const DM = `D${ALICE}`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startSlack() {
  const fake = new FakeSlack();
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const config = slackChannel.configSchema.parse({ enabled: true, bot_token: fake.botToken, app_token: fake.appToken, api_url: fake.apiUrl });
  const adapter = await slackChannel.create(config, testChannelDeps({ intake, commands: [], logger: silentLogger() }));
  cleanups.push(() => adapter.stop());
  await adapter.start();
  return { fake, intake, files: adapter.files as ChannelFiles };
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'slack-files-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('Slack files', () => {
  it('hands over a shared file as a reference and downloads its bytes with the bot token', async () => {
    const { fake, intake, files } = await startSlack();
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    await fake.sendUserMessage({ channel: DM, channelType: 'im', user: ALICE, text: 'look at this', files: [{ name: 'chart.png', mimetype: 'image/png', bytes }] });
    await intake.waitUntil(() => intake.committed.length === 1);
    const [file] = (intake.committed[0] as InboundMessage).files ?? [];
    expect(file).toMatchObject({ name: 'chart.png', mimeType: 'image/png', isImage: true, declaredSize: bytes.length });
    expect(Buffer.from(await files.download(file as NonNullable<typeof file>))).toEqual(Buffer.from(bytes));
  });

  it('never sends the token off Slack’s hosts, and refuses files declared over the limit', async () => {
    const { files } = await startSlack();
    const foreign = { name: 'x.txt', mimeType: 'text/plain', isImage: false, ref: 'http://127.0.0.2:1/steal' };
    await expect(files.download(foreign)).rejects.toMatchObject({ code: 'FILE_UNAVAILABLE', userMessage: 'download unavailable' });
    const huge = { name: 'big.bin', mimeType: 'application/octet-stream', isImage: false, declaredSize: 60_000_000, ref: 'https://files.slack.com/x' };
    await expect(files.download(huge)).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
  });

  it('uploads a file into the person’s thread with files.uploadV2', async () => {
    const { fake, intake, files } = await startSlack();
    const sent = await fake.sendUserMessage({ channel: DM, channelType: 'im', user: ALICE, text: 'make a report' });
    await intake.waitUntil(() => intake.committed.length === 1);
    const inbound = intake.committed[0] as InboundMessage;
    const dir = await tempDir();
    const hostPath = join(dir, 'report.csv');
    await writeFile(hostPath, 'a,b\n1,2\n');
    const file: OutboundFile = { hostPath, name: 'report.csv', mimeType: 'text/csv', isImage: false, size: 8 };
    await files.send({ chatId: inbound.chatId, topicId: inbound.topicId, isPrivateChat: true, replyTo: inbound.replyTo }, file);
    const shared = fake.botMessages(DM).find((m) => m.files.length > 0);
    expect(shared).toMatchObject({ threadTs: sent.ts, files: [{ name: 'report.csv', size: 8 }] });
    expect(Buffer.from(fake.uploadedFile(shared?.files[0]?.id ?? '') ?? []).toString()).toBe('a,b\n1,2\n');
  });

  it('refuses a file over 50 MB without calling Slack', async () => {
    const { fake, files } = await startSlack();
    const dir = await tempDir();
    const hostPath = join(dir, 'huge.bin');
    await writeFile(hostPath, '');
    await truncate(hostPath, 50_000_001);
    const file: OutboundFile = { hostPath, name: 'huge.bin', mimeType: 'application/octet-stream', isImage: false, size: 50_000_001 };
    await expect(files.send({ chatId: DM, isPrivateChat: true, replyTo: {} }, file)).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(fake.calls.filter((c) => c.method.startsWith('files.'))).toEqual([]);
  });
});
