import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { telegramChannel } from '../../../channels/telegram/index.js';
import { Outbox } from '../../../src/channel/outbox.js';
import { InProcessRequestWindow } from '../../../src/channel/request-window.js';
import type { ChannelAdapter, ReplyTarget } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { SqlOutboxStore } from '../../../src/db/repos/outbox-repo.js';
import { silentLogger } from '../../../src/logger.js';
import { FakeTelegram } from '../../fakes/telegram/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { openTestDatabase } from '../../helpers/database.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/**
 * Many answers at once into one Telegram group (schedules due together): every message and edit
 * to the group keeps to its budget across all of them, and every answer still arrives, once,
 * the ones that had to wait through the outbox. The group's 20 a minute is scaled down here to
 * 5 in 2 s (`deps.requestWindow` is core's to give), so the test takes seconds.
 */

const GROUP = -100_123;
const PER_WINDOW = 5;
const WINDOW_MS = 2000;
const ANSWERS = 12;

describe('answers into one Telegram group, all at once', () => {
  let fake: FakeTelegram;
  let adapter: ChannelAdapter;
  let database: DatabaseHandle;
  let outbox: Outbox;

  beforeAll(async () => {
    // The fake floods a group as Telegram does, on the same scaled budget.
    fake = new FakeTelegram({ groupLimit: { perWindow: PER_WINDOW, windowMs: WINDOW_MS } });
    await fake.start();
    const config = telegramChannel.configSchema.parse({ enabled: true, bot_token: fake.token, api_root: fake.apiRoot, polling_timeout_seconds: 1 });
    adapter = await telegramChannel.create(
      config,
      testChannelDeps({
        intake: new RecordingIntake(),
        commands: [],
        logger: silentLogger(),
        requestWindow: (name, perWindow, windowMs) =>
          name === 'group' ? new InProcessRequestWindow(PER_WINDOW, WINDOW_MS) : new InProcessRequestWindow(perWindow, windowMs),
      }),
    );
    database = await openTestDatabase('pglite');
    outbox = new Outbox({ store: new SqlOutboxStore(database.db), channel: () => adapter, logger: silentLogger(), deadlineMs: 120_000, pollMs: 100 });
    outbox.start();
  });
  afterAll(async () => {
    await outbox?.stop();
    await adapter?.stop();
    await database?.close();
    await fake?.stop();
  });

  it('keeps every message and edit to the group within its budget, and delivers every answer once', async () => {
    // The group the bot is in (the fake knows chats people wrote in).
    fake.sendUserMessage({ chatId: GROUP, chatType: 'supergroup', text: 'morning' });
    const target: ReplyTarget = { chatId: String(GROUP), isPrivateChat: false, replyTo: {} };
    const answers = Array.from({ length: ANSWERS }, (_, i) => `Scheduled report ${i}: all green.`);
    await Promise.all(
      answers.map(async (answer) => {
        const reply = outbox.durable('telegram', target, adapter.egress.reply(target));
        // A partial, as a streaming answer sends, then the final.
        reply.update(`${answer.slice(0, 10)} ▉`);
        await reply.finish(answer);
      }),
    );
    const shown = () => fake.botMessages(GROUP).map((message) => message.text);
    expect(await outbox.counts()).toMatchObject({ dead: 0 });
    await fake.waitFor(() => answers.every((answer) => shown().includes(answer)) || undefined, 60_000);
    for (const answer of answers) expect(shown().filter((text) => text === answer)).toHaveLength(1);
    // In every window of WINDOW_MS, at most PER_WINDOW messages and edits reached the group.
    const sends = fake.calls
      .filter((call) => call.params.chat_id === GROUP && (call.method === 'sendMessage' || call.method === 'editMessageText'))
      .map((call) => call.at)
      .sort((a, b) => a - b);
    expect(sends.length).toBeGreaterThanOrEqual(ANSWERS);
    for (const [i, at] of sends.entries()) {
      const inWindow = sends.filter((other, j) => j >= i && other < at + WINDOW_MS).length;
      expect(inWindow).toBeLessThanOrEqual(PER_WINDOW);
    }
    // Telegram never had to refuse one: no 429 came back.
    expect(fake.groupFloods).toEqual([]);
    expect(fake.rateLimitViolations).toEqual([]);
  }, 90_000);
});
