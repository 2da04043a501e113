import { afterEach, describe, expect, it } from 'vitest';
import { wechatChannel } from '../../../channels/wechat/index.js';
import { CURSOR_KEY } from '../../../channels/wechat/ingress.js';
import { WECHAT_TEXTS } from '../../../channels/wechat/texts.js';
import type { ChannelAdapter } from '../../../src/channel/types.js';
import { createLogger } from '../../../src/logger.js';
import { FakeWeChat } from '../../fakes/wechat/index.js';
import { MemoryChannelState, testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';
import { weChatTestConfig } from '../../helpers/wechat-config.js';

/**
 * What the WeChat channel does when iLink misbehaves: an expired session, a dropped long poll,
 * 5xx answers, a message delivered twice, a malformed message in a batch; and when its cursor
 * is saved.
 */

const ALICE = 'alice@im.wechat';
const BOB = 'bob@im.wechat';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startWeChat(options: { state?: MemoryChannelState } = {}) {
  const fake = new FakeWeChat({ longPollHoldMs: 200 });
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const logs: string[] = [];
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void logs.push(line) } });
  const state = options.state ?? new MemoryChannelState();
  const config = weChatTestConfig(fake);
  const adapter: ChannelAdapter = await wechatChannel.create(config, testChannelDeps({ intake, commands: [], logger, state }));
  cleanups.push(() => adapter.stop());
  await adapter.start();
  const polls = () => fake.calls.filter((c) => c.path === '/ilink/bot/getupdates');
  /** Resolves once the adapter asked for updates `count` more times: what it got before is handled. */
  const pollsMore = (count: number) => {
    const from = polls().length;
    return fake.waitFor(() => polls().length >= from + count);
  };
  return { fake, intake, adapter, state, logs, polls, pollsMore };
}

describe('WeChat faults', () => {
  it('stops polling on errcode -14 and says so in its status, without the token in any log', async () => {
    const { fake, adapter, polls, logs } = await startWeChat();
    await fake.waitFor(() => polls().length > 0);
    fake.expireToken();
    await fake.waitFor(() => adapter.status().running === false || undefined);
    expect(adapter.status()).toEqual({ running: false, reason: WECHAT_TEXTS.sessionExpired });
    // A round trip of our own to the fake: a poll sent straight after the refusal would be in by now.
    await fetch(`${fake.baseUrl}/ilink/bot/nothing-here`, { method: 'POST', body: '{}' });
    await fake.waitFor(() => fake.calls.some((c) => c.path === '/ilink/bot/nothing-here'));
    expect(polls().filter((c) => c.ret === -14)).toHaveLength(1);
    expect(logs.join('\n')).not.toContain(fake.token);
  });

  it('polls again after a restart of the channel once the session is valid again', async () => {
    const { fake, adapter, intake } = await startWeChat();
    fake.expireToken();
    await fake.waitFor(() => adapter.status().running === false || undefined);
    fake.renewToken(fake.token);
    await adapter.stop();
    await adapter.start();
    const sent = fake.sendUserMessage({ userId: ALICE, text: 'back again' });
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === sent.messageId));
    expect(adapter.status()).toEqual({ running: true });
  });

  it('polls on after a dropped socket and 5xx answers; the message sent meanwhile arrives once', async () => {
    const { fake, intake, adapter, polls, pollsMore } = await startWeChat();
    fake.failNext('getupdates', { kind: 'drop' });
    fake.failNext('getupdates', { kind: 'http', status: 502 }, 2);
    const failed = () => polls().filter((c) => c.status === 0 || c.status === 502);
    await fake.waitFor(() => failed().length === 3);
    expect(adapter.status()).toMatchObject({ running: true, reason: expect.stringContaining('retrying') });
    const sent = fake.sendUserMessage({ userId: ALICE, text: 'are you there?' });
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === sent.messageId));
    await pollsMore(1);
    expect(intake.committed.map((m) => m.text)).toEqual(['are you there?']);
    expect(adapter.status()).toEqual({ running: true });
    expect(fake.botMessages(ALICE).map((m) => m.text)).toEqual([WECHAT_TEXTS.working]);
  });

  it('takes a message iLink delivers twice once: one acknowledgement, one commit', async () => {
    const { fake, intake, pollsMore } = await startWeChat();
    const sent = fake.sendUserMessage({ userId: ALICE, text: 'only once please' });
    await intake.waitUntil(() => intake.committed.length === 1);
    fake.redeliver(sent.messageId);
    // The poll that brought it again, and the next one (asked only once that batch was handled).
    await pollsMore(2);
    expect(intake.committed.map((m) => m.messageId)).toEqual([sent.messageId]);
    expect(fake.botMessages(ALICE).map((m) => m.text)).toEqual([WECHAT_TEXTS.working]);
  });

  it('keeps a batch going past a malformed message, and saves the cursor only once the batch is handled', async () => {
    const state = new MemoryChannelState();
    const { fake, intake, pollsMore, logs } = await startWeChat({ state });
    await pollsMore(1);
    let release: () => void = () => undefined;
    intake.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // One batch: a message without a sender, then two people's messages.
    fake.sendUserMessage({ userId: ALICE, raw: { message_id: 1, message_type: 1, item_list: 'not a list' } });
    const alice = fake.sendUserMessage({ userId: ALICE, text: 'first' });
    const bob = fake.sendUserMessage({ userId: BOB, text: 'second' });
    await intake.waitUntil(() => intake.reserved >= 1);
    const cursorWhileHeld = state.entries.get(CURSOR_KEY);
    release();
    await intake.waitUntil(() => intake.committed.length === 2);
    await pollsMore(1);
    expect(intake.committed.map((m) => m.messageId).sort()).toEqual([alice.messageId, bob.messageId].sort());
    expect(state.entries.get(CURSOR_KEY)).not.toBe(cursorWhileHeld);
    expect(state.entries.get(CURSOR_KEY)).toMatch(/\S/);
    expect(logs.some((line) => line.includes('malformed event dropped'))).toBe(true);
  });

  it('rejects a final that meets a 5xx with a ChannelError for the outbox, and delivers it on the next try', async () => {
    const { fake, intake, adapter } = await startWeChat();
    const sent = fake.sendUserMessage({ userId: ALICE, text: 'question' });
    await intake.waitUntil(() => intake.committed.length === 1);
    const message = intake.committed[0];
    if (!message) throw new Error('no message');
    const target = { chatId: message.chatId, isPrivateChat: true, replyTo: message.replyTo };
    fake.failNext('sendmessage', { kind: 'http', status: 503 });
    await expect(adapter.egress.reply(target).finish('the answer')).rejects.toMatchObject({ code: 'CHANNEL_UNAVAILABLE' });
    await adapter.egress.reply(target).finish('the answer');
    expect(fake.botMessages(ALICE).map((m) => [m.text, m.replyTo])).toEqual([
      [WECHAT_TEXTS.working, sent.messageId],
      ['the answer', sent.messageId],
    ]);
  });
});
