import { afterEach, describe, expect, it } from 'vitest';
import { dingtalkChannel } from '../../../channels/dingtalk/index.js';
import { FakeDingTalk } from '../../fakes/dingtalk/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { CapturedLogs, MALFORMED_EVENT_WARNING } from './malformed-events.js';

/**
 * Robot callbacks of the wrong shape pushed down the stream connection to the real
 * `dingtalk-stream` client: each is acked (DingTalk would push it again), warned about once by
 * path and dropped; no error line, and the next genuine message is answered.
 */

const ALICE = 'staffalice01';
const SECRET_TEXT = 'do-not-log-this-text';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A well-formed private text message from Alice, before the test breaks it. */
function genuine(fake: FakeDingTalk, msgId: string): Record<string, unknown> {
  return {
    conversationId: `cidP2P${ALICE}`,
    chatbotUserId: fake.chatbotUserId,
    msgId,
    senderStaffId: ALICE,
    senderId: `$:LWCP_v1:$${ALICE}`,
    conversationType: '1',
    msgtype: 'text',
    text: { content: SECRET_TEXT },
  };
}

const MALFORMED: Array<[string, (data: Record<string, unknown>) => unknown]> = [
  ['data null', () => null],
  ['data a string', () => SECRET_TEXT],
  ['data an array', (d) => [d]],
  ['msgId a number', (d) => ({ ...d, msgId: 5 })],
  ['senderStaffId an object', (d) => ({ ...d, senderStaffId: { id: ALICE } })],
  ['text a string', (d) => ({ ...d, text: SECRET_TEXT })],
  ['text.content a number', (d) => ({ ...d, text: { content: 12 } })],
  ['richText a number', (d) => ({ ...d, msgtype: 'richText', text: undefined, content: { richText: 3 } })],
  ['richText parts numbers', (d) => ({ ...d, msgtype: 'richText', text: undefined, content: { richText: [1, 2] } })],
  ['conversationType an object', (d) => ({ ...d, conversationType: { type: 2 } })],
  ['sessionWebhook a number', (d) => ({ ...d, sessionWebhook: 80, sessionWebhookExpiredTime: Date.now() + 60_000 })],
  ['fileName a number', (d) => ({ ...d, msgtype: 'file', text: undefined, content: { downloadCode: 'c', fileName: 9 } })],
];

describe('DingTalk malformed robot callbacks', () => {
  it('acks each, warns once per callback without its text, logs no error, and answers the next genuine message', async () => {
    const fake = new FakeDingTalk();
    await fake.start();
    cleanups.push(() => fake.stop());
    const logs = new CapturedLogs();
    const intake = new RecordingIntake();
    const config = dingtalkChannel.configSchema.parse({ enabled: true, client_id: fake.clientId, client_secret: fake.clientSecret, api_url: fake.apiUrl });
    const adapter = await dingtalkChannel.create(config, testChannelDeps({ intake, commands: [], logger: logs.logger }));
    cleanups.push(() => adapter.stop());
    await adapter.start();

    const frames: string[] = [];
    for (const [index, [, breakIt]] of MALFORMED.entries()) {
      frames.push(await fake.deliverCallback(breakIt(genuine(fake, `bad${index}`)) as Record<string, unknown>));
    }
    await logs.waitForWarnings(MALFORMED_EVENT_WARNING, MALFORMED.length);
    await fake.waitFor(() => frames.every((frame) => fake.isAcked(frame)));
    const sent = await fake.sendUserMessage({ chat: 'private', userId: ALICE, text: 'genuine hello' });
    await intake.waitUntil(() => intake.committed.length === 1);
    expect(intake.committed[0]).toMatchObject({ messageId: sent.msgId, text: 'genuine hello' });
    const warnings = logs.warnings().filter((line) => line.msg === MALFORMED_EVENT_WARNING);
    expect(warnings).toHaveLength(MALFORMED.length);
    expect(warnings.every((line) => line.platform === 'dingtalk' && Array.isArray(line.issues))).toBe(true);
    expect(logs.errors()).toEqual([]);
    expect(JSON.stringify(logs.lines)).not.toContain(SECRET_TEXT);
  });
});
