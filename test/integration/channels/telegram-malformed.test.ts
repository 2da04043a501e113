import type { Update } from 'grammy/types';
import { afterEach, describe, expect, it } from 'vitest';
import { telegramChannel } from '../../../channels/telegram/index.js';
import { FakeTelegram } from '../../fakes/telegram/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { CapturedLogs, MALFORMED_EVENT_WARNING } from './malformed-events.js';

/**
 * Updates of the wrong shape served by the fake Bot API's getUpdates to the real grammY bot: each
 * is dropped with one warning naming only paths (and confirmed, so it is not fetched again); no
 * error line, and the next genuine message is answered.
 */

const CHAT = 424242;
const SECRET_TEXT = 'do-not-log-this-text';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Raw = Record<string, unknown>;
const genuine = (id: number): Raw => ({
  message_id: id,
  date: Math.floor(Date.now() / 1000),
  chat: { id: CHAT, type: 'private', first_name: 'Alice' },
  from: { id: CHAT, is_bot: false, first_name: 'Alice' },
  text: SECRET_TEXT,
});

const MALFORMED: Array<[string, (message: Raw) => unknown]> = [
  ['chat missing', ({ chat: _chat, ...rest }) => rest],
  ['chat null', (m) => ({ ...m, chat: null })],
  ['chat.id a string', (m) => ({ ...m, chat: { id: 'abc', type: 'private' } })],
  ['from a string', (m) => ({ ...m, from: SECRET_TEXT })],
  ['from.id a string', (m) => ({ ...m, from: { id: 'x', is_bot: false, first_name: 'A' } })],
  ['text a number', (m) => ({ ...m, text: 12 })],
  ['message_id a string', (m) => ({ ...m, message_id: 'one' })],
  ['photo a string', (m) => ({ ...m, text: undefined, caption: 'c', photo: SECRET_TEXT })],
  ['document without file_id', (m) => ({ ...m, text: undefined, document: { file_name: 'a.txt' } })],
  ['reply_to_message a number', (m) => ({ ...m, reply_to_message: 3 })],
];

describe('Telegram malformed updates', () => {
  it('drops each with one warning, logs no error, and answers the next genuine message', async () => {
    const fake = new FakeTelegram();
    await fake.start();
    cleanups.push(() => fake.stop());
    const logs = new CapturedLogs();
    const intake = new RecordingIntake();
    const config = telegramChannel.configSchema.parse({ enabled: true, bot_token: fake.token, api_root: `${fake.apiRoot}/`, polling_timeout_seconds: 1 });
    const adapter = await telegramChannel.create(config, testChannelDeps({ intake, commands: [], logger: logs.logger }));
    cleanups.push(() => adapter.stop());
    await adapter.start();
    for (const [index, [, breakIt]] of MALFORMED.entries()) fake.pushUpdate({ message: breakIt(genuine(100 + index)) } as unknown as Omit<Update, 'update_id'>);
    await logs.waitForWarnings(MALFORMED_EVENT_WARNING, MALFORMED.length);
    fake.sendUserMessage({ chatId: CHAT, chatType: 'private', text: 'genuine hello' });
    await intake.waitUntil(() => intake.committed.length === 1);
    expect(intake.committed[0]).toMatchObject({ chatId: String(CHAT), text: 'genuine hello' });
    const warnings = logs.warnings().filter((line) => line.msg === MALFORMED_EVENT_WARNING);
    expect(warnings).toHaveLength(MALFORMED.length);
    expect(warnings.every((line) => line.platform === 'telegram' && Array.isArray(line.issues))).toBe(true);
    expect(logs.errors()).toEqual([]);
    expect(JSON.stringify(logs.lines)).not.toContain(SECRET_TEXT);
  });
});
