import { afterEach, describe, expect, it } from 'vitest';
import { feishuChannel } from '../../../channels/feishu/index.js';
import { FakeFeishu } from '../../fakes/feishu/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { serveWebhookRoutes } from '../../helpers/webhook-server.js';
import { CapturedLogs, MALFORMED_EVENT_WARNING } from './malformed-events.js';

/**
 * Feishu events of the wrong shape, signed and encrypted (HTTP callbacks) or pushed down the long
 * connection to the real `WSClient`: each is acknowledged (HTTP 200, so Feishu does not retry it
 * forever; the frame acked), warned about once by path, and dropped; no error line, and the next
 * genuine message is answered.
 */

const ALICE = 'ou_alice00000000000000000000000001';
const P2P = 'oc_p2p_alice';
const ENCRYPT_KEY = 'fake-encrypt-key';
const SECRET_TEXT = 'do-not-log-this-text';

type Mutation = (event: { header: Record<string, unknown>; event: Record<string, unknown> & { message: Record<string, unknown> } }) => void;

const MALFORMED: Array<[string, Mutation]> = [
  ['event missing', (e) => Reflect.deleteProperty(e, 'event')],
  ['event a string', (e) => Object.assign(e, { event: SECRET_TEXT })],
  ['event.message a string', (e) => Object.assign(e.event, { message: SECRET_TEXT })],
  ['event.message null', (e) => Object.assign(e.event, { message: null })],
  ['sender null', (e) => Object.assign(e.event, { sender: null })],
  ['sender_id a string', (e) => Object.assign(e.event, { sender: { sender_id: SECRET_TEXT, sender_type: 'user' } })],
  ['message_id a number', (e) => Object.assign(e.event.message, { message_id: 42 })],
  ['chat_id an object', (e) => Object.assign(e.event.message, { chat_id: { id: P2P } })],
  ['content a number', (e) => Object.assign(e.event.message, { content: 7 })],
  ['mentions a string', (e) => Object.assign(e.event.message, { mentions: SECRET_TEXT })],
  ['mention name a number', (e) => Object.assign(e.event.message, { mentions: [{ key: '@_user_1', name: 5 }] })],
];
/** Only an HTTP callback can carry these: the long connection routes frames by `header.event_type`. */
const HTTP_ONLY: Array<[string, Mutation]> = [
  ['header.event_type a number', (e) => Object.assign(e.header, { event_type: 3 })],
  ['header.event_id a number', (e) => Object.assign(e.header, { event_id: 9 })],
];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startFeishu(mode: 'ws' | 'http') {
  const fake = new FakeFeishu();
  await fake.start();
  cleanups.push(() => fake.stop());
  const logs = new CapturedLogs();
  const intake = new RecordingIntake();
  const http = mode === 'http' ? { mode: 'http', encrypt_key: ENCRYPT_KEY, verification_token: fake.verificationToken } : {};
  const config = feishuChannel.configSchema.parse({ enabled: true, app_id: fake.appId, app_secret: fake.appSecret, domain: fake.url, ...http });
  const adapter = await feishuChannel.create(config, testChannelDeps({ intake, commands: [], logger: logs.logger }));
  cleanups.push(() => adapter.stop());
  let url = '';
  if (adapter.routes) {
    const server = await serveWebhookRoutes('feishu', adapter.routes);
    cleanups.push(server.close);
    url = server.url;
  }
  await adapter.start();
  /** Delivers `event` as the mode does; resolves with the HTTP status (0 for the long connection). */
  const deliver = async (event: Record<string, unknown>, eventId: string, messageId: string): Promise<number> => {
    if (mode === 'ws') {
      fake.pushEvent(event, eventId, messageId, P2P);
      return 0;
    }
    const callback = FakeFeishu.signedCallback(event, ENCRYPT_KEY);
    return (await fetch(url, { method: 'POST', body: callback.body, headers: callback.headers })).status;
  };
  return { fake, intake, logs, deliver };
}

describe.each(['http', 'ws'] as const)('Feishu malformed events (%s)', (mode) => {
  it('acknowledges each, warns once per event without its text, logs no error, and answers the next genuine message', async () => {
    const { fake, intake, logs, deliver } = await startFeishu(mode);
    const table = mode === 'http' ? [...MALFORMED, ...HTTP_ONLY] : MALFORMED;
    const statuses: number[] = [];
    for (const [, mutate] of table) {
      const built = fake.buildUserEvent({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: SECRET_TEXT });
      const event = structuredClone(built.event) as Parameters<Mutation>[0];
      mutate(event);
      statuses.push(await deliver(event, built.eventId, built.messageId));
    }
    await logs.waitForWarnings(MALFORMED_EVENT_WARNING, table.length);
    if (mode === 'http') expect(statuses).toEqual(table.map(() => 200));
    else await fake.waitFor(() => fake.events.filter((e) => e.acked).length === table.length);
    const genuine = fake.buildUserEvent({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: 'genuine hello' });
    await deliver(genuine.event, genuine.eventId, genuine.messageId);
    await intake.waitUntil(() => intake.committed.length === 1);
    expect(intake.committed[0]).toMatchObject({ messageId: genuine.messageId, text: 'genuine hello' });
    const warnings = logs.warnings().filter((line) => line.msg === MALFORMED_EVENT_WARNING);
    expect(warnings).toHaveLength(table.length);
    expect(warnings.every((line) => line.platform === 'feishu' && Array.isArray(line.issues))).toBe(true);
    expect(logs.errors()).toEqual([]);
    expect(JSON.stringify(logs.lines)).not.toContain(SECRET_TEXT);
  });
});
