import { afterEach, describe, expect, it } from 'vitest';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { CapturedLogs, MALFORMED_EVENT_WARNING } from './malformed-events.js';
import { startSlackOn } from './slack-transport.js';

/**
 * Signed (HTTP) or socket-delivered (Socket Mode) Slack events of the wrong shape, through Bolt
 * and the real adapter: each is acknowledged (HTTP 200, so Slack does not retry it forever),
 * logged once as a warning naming only paths, and dropped; no error line, and the next genuine
 * message is answered.
 */

const ALICE = 'U0ALICE1';
const DM = `D${ALICE}`;
const SECRET_TEXT = 'do-not-log-this-text';

const MALFORMED: Array<[string, Record<string, unknown>]> = [
  ['event missing', { event: undefined }],
  ['event a string', { event: SECRET_TEXT }],
  ['event null', { event: null }],
  ['event an array', { event: [SECRET_TEXT] }],
  ['event type a number', { event: { type: 42, channel: DM, user: ALICE, ts: '1.1', text: SECRET_TEXT } }],
  ['channel a number', { event: { type: 'message', channel: 123, user: ALICE, ts: '1.2', text: SECRET_TEXT } }],
  ['ts a number', { event: { type: 'message', channel: DM, channel_type: 'im', user: ALICE, ts: 1.3, text: SECRET_TEXT } }],
  ['user an object', { event: { type: 'message', channel: DM, channel_type: 'im', user: { id: ALICE }, ts: '1.4', text: SECRET_TEXT } }],
  ['text an array', { event: { type: 'message', channel: DM, channel_type: 'im', user: ALICE, ts: '1.5', text: [SECRET_TEXT] } }],
  ['files a string', { event: { type: 'message', subtype: 'file_share', channel: DM, user: ALICE, ts: '1.6', files: SECRET_TEXT } }],
  ['app_mention without channel', { event: { type: 'app_mention', user: ALICE, ts: '1.7', text: SECRET_TEXT } }],
  ['team_id a number', { team_id: 7, event: { type: 'message', channel: DM, channel_type: 'im', user: ALICE, ts: '1.8', text: SECRET_TEXT } }],
  ['authorizations a string', { authorizations: SECRET_TEXT, event: { type: 'message', channel: DM, user: ALICE, ts: '1.9', text: 'x' } }],
  ['type missing', { type: undefined, event: { type: 'message', channel: DM, user: ALICE, ts: '1.10', text: 'x' } }],
];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startSlack(mode: 'http' | 'socket') {
  const logs = new CapturedLogs();
  const intake = new RecordingIntake();
  const fake = await startSlackOn(mode, { intake, logger: logs.logger, cleanups });
  return { fake, intake, logs };
}

describe.each(['http', 'socket'] as const)('Slack malformed events (%s)', (mode) => {
  it('acknowledges each, warns once per event without its text, logs no error, and answers the next genuine message', async () => {
    const { fake, intake, logs } = await startSlack(mode);
    for (const [, overrides] of MALFORMED) await fake.deliverPayload(overrides);
    await logs.waitForWarnings(MALFORMED_EVENT_WARNING, MALFORMED.length);
    if (mode === 'http') expect(fake.eventResponses.map((r) => r.status)).toEqual(MALFORMED.map(() => 200));
    else await fake.waitFor(() => fake.acks.length === MALFORMED.length);
    const sent = await fake.sendUserMessage({ channel: DM, channelType: 'im', user: ALICE, text: 'genuine hello' });
    await intake.waitUntil(() => intake.committed.length === 1);
    expect(intake.committed[0]).toMatchObject({ messageId: sent.ts, text: 'genuine hello' });
    const warnings = logs.warnings().filter((line) => line.msg === MALFORMED_EVENT_WARNING);
    expect(warnings).toHaveLength(MALFORMED.length);
    expect(warnings.every((line) => line.platform === 'slack' && Array.isArray(line.issues))).toBe(true);
    expect(logs.errors()).toEqual([]);
    expect(JSON.stringify(logs.lines)).not.toContain(SECRET_TEXT);
  });
});
