import { afterEach, describe, expect, it } from 'vitest';
import { feishuChannel } from '../../../channels/feishu/index.js';
import { FEISHU_LIMITS } from '../../../channels/feishu/limits.js';
import type { ChannelAdapter, InboundMessage, ReplyTarget } from '../../../src/channel/types.js';
import { silentLogger } from '../../../src/logger.js';
import { displayMessage } from '../../fakes/feishu/display.js';
import { FakeFeishu } from '../../fakes/feishu/index.js';
import { testChannelDeps } from '../../helpers/channel-deps.js';
import { RecordingIntake } from '../../helpers/recording-intake.js';

/** The Feishu adapter over its long connection against FakeFeishu: the bad inputs. */

const ALICE = 'ou_alice00000000000000000000000001';
const P2P = 'oc_p2p_alice';
const GROUP = 'oc_group0000000000000000000000001';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startFeishu(options: { isStarted?: boolean; appSecret?: string } = {}) {
  const fake = new FakeFeishu();
  await fake.start();
  cleanups.push(() => fake.stop());
  const intake = new RecordingIntake();
  const config = feishuChannel.configSchema.parse({ enabled: true, app_id: fake.appId, app_secret: options.appSecret ?? fake.appSecret, domain: fake.url });
  const adapter: ChannelAdapter = await feishuChannel.create(config, testChannelDeps({ intake, commands: [{ name: 'new', description: 'new' }], logger: silentLogger() }));
  cleanups.push(() => adapter.stop());
  if (options.isStarted !== false) await adapter.start();
  return { fake, intake, adapter };
}

/** What the manager hands the egress for `message`. */
function targetOf(message: InboundMessage): ReplyTarget {
  return {
    chatId: message.chatId,
    isPrivateChat: message.isPrivateChat,
    replyTo: message.replyTo,
    recipient: { userId: message.userId },
    ...(message.topicId === undefined ? {} : { topicId: message.topicId }),
    ...(message.platformData === undefined ? {} : { platformData: message.platformData }),
  };
}

/** A group message that reached the intake. */
async function groupMessage(started: Awaited<ReturnType<typeof startFeishu>>, input: { openId: string; text: string; parentId?: string }) {
  const sent = started.fake.sendUserMessage({ chatId: GROUP, chatType: 'group', mentionsBot: true, ...input });
  await started.intake.waitUntil(() => started.intake.committed.some((m) => m.messageId === sent.messageId));
  return started.intake.committed.find((m) => m.messageId === sent.messageId) as InboundMessage;
}

async function sendAndCommit(started: Awaited<ReturnType<typeof startFeishu>>, text: string) {
  const sent = started.fake.sendUserMessage({ chatId: P2P, chatType: 'p2p', openId: ALICE, text });
  await started.intake.waitUntil(() => started.intake.committed.some((m) => m.messageId === sent.messageId));
  return { sent, inbound: started.intake.committed.find((m) => m.messageId === sent.messageId) as InboundMessage };
}

describe('feishu ingress', () => {
  it('drops unknown message types, empty content and mentions-only messages without acknowledging them', async () => {
    const started = await startFeishu();
    const { fake, intake } = started;
    const sticker = fake.sendUserMessage({ chatId: P2P, chatType: 'p2p', openId: ALICE, messageType: 'sticker', content: JSON.stringify({ file_key: 'sticker1' }) });
    const empty = fake.sendUserMessage({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: '   ' });
    const broken = fake.sendUserMessage({ chatId: P2P, chatType: 'p2p', openId: ALICE, messageType: 'text', content: '{not json' });
    const mentionOnly = fake.sendUserMessage({ chatId: GROUP, chatType: 'group', openId: ALICE, text: '', mentionsBot: true });
    const { sent } = await sendAndCommit(started, 'a real question');
    expect(intake.committed.map((m) => m.messageId)).toEqual([sent.messageId]);
    const dropped = [sticker, empty, broken, mentionOnly].map((m) => m.messageId);
    expect(fake.messages.filter((m) => m.fromBot && dropped.includes(m.replyTo ?? ''))).toEqual([]);
    expect(fake.reactions.filter((r) => dropped.includes(r.messageId))).toEqual([]);
  });

  it('parses post, image and file messages and strips a leading mention to classify commands', async () => {
    const { fake, intake } = await startFeishu();
    const post = fake.sendUserMessage({
      chatId: P2P,
      chatType: 'p2p',
      openId: ALICE,
      messageType: 'post',
      content: JSON.stringify({ title: '', content: [[{ tag: 'text', text: 'see' }, { tag: 'img', image_key: 'img_v3_abc' }], [{ tag: 'text', text: 'thanks' }]] }),
    });
    const command = fake.sendUserMessage({ chatId: GROUP, chatType: 'group', openId: ALICE, text: '/new topic', mentionsBot: true });
    const file = fake.sendUserMessage({ chatId: P2P, chatType: 'p2p', openId: ALICE, messageType: 'file', content: JSON.stringify({ file_key: 'file_v3_xyz', file_name: 'report.pdf' }) });
    await intake.waitUntil(() => intake.committed.length === 3);
    const byId = (id: string) => intake.committed.find((m) => m.messageId === id);
    expect(byId(post.messageId)).toMatchObject({ text: 'see [image]\nthanks', files: [expect.objectContaining({ isImage: true })] });
    expect(byId(command.messageId)).toMatchObject({ kind: 'command', text: '/new topic', isPrivateChat: false, topicId: command.messageId });
    expect(byId(file.messageId)).toMatchObject({ text: '[file]', files: [expect.objectContaining({ name: 'report.pdf', isImage: false })] });
  });

  it('merges pictures sent together into one message, marks each OK then DONE, and keeps a picture sent as a reply apart', async () => {
    const started = await startFeishu();
    const { fake, intake, adapter } = started;
    const picture = (key: string, parentId?: string) =>
      fake.sendUserMessage({ chatId: GROUP, chatType: 'group', openId: ALICE, messageType: 'image', content: JSON.stringify({ image_key: key }), ...(parentId ? { parentId } : {}) });
    const pictures = [picture('img_v3_one'), picture('img_v3_two'), picture('img_v3_three')];
    const asReply = picture('img_v3_reply', pictures[0]?.messageId);
    await intake.waitUntil(() => intake.committed.length === 2);
    const merged = intake.committed.find((m) => m.messageId === pictures[0]?.messageId) as InboundMessage;
    expect(merged).toMatchObject({ text: '[image]\n\n[image]\n\n[image]', topicId: pictures[0]?.messageId });
    expect(merged.files).toHaveLength(3);
    expect(intake.committed.find((m) => m.messageId === asReply.messageId)?.files).toHaveLength(1);
    // One answer for the three, replying to the first.
    expect(fake.botMessages(GROUP).map((m) => m.replyTo).sort()).toEqual([pictures[0]?.messageId, asReply.messageId].sort());
    await adapter.egress.reply(targetOf(merged)).finish('Three pictures.', { failed: false });
    for (const { messageId } of pictures) {
      expect(fake.reactions.filter((r) => r.messageId === messageId).map((r) => r.emoji)).toEqual(['OK', 'DONE']);
    }
  });

  it("handles a picture's event delivered again once, inside its batch's window and after it", async () => {
    const { fake, intake } = await startFeishu();
    const picture = (key: string) => fake.buildUserEvent({ chatId: GROUP, chatType: 'group', openId: ALICE, messageType: 'image', content: JSON.stringify({ image_key: key }) });
    const push = (built: ReturnType<typeof picture>) => fake.pushEvent(built.event, built.eventId, built.messageId, GROUP);
    const [one, two, three] = [picture('img_v3_one'), picture('img_v3_two'), picture('img_v3_three')];
    push(one);
    push(two);
    push(one);
    await intake.waitUntil(() => intake.committed.length === 1);
    push(two);
    // Had the redelivery been taken, this picture would join it in one batch.
    push(three);
    await intake.waitUntil(() => intake.committed.length === 2);
    expect(intake.committed.map((m) => [m.messageId, m.files?.length])).toEqual([
      [one.messageId, 2],
      [three.messageId, 1],
    ]);
    expect(fake.reactions.filter((r) => r.messageId === two.messageId)).toHaveLength(1);
  });

  it("stays within the app's 50 calls a second per API when many people write at once", async () => {
    const { fake, intake } = await startFeishu();
    const people = Array.from({ length: 70 }, (_, i) => `ou_crowd${String(i).padStart(26, '0')}`);
    for (const openId of people) fake.sendUserMessage({ chatId: `oc_p2p_${openId}`, chatType: 'p2p', openId, text: 'hello' });
    await intake.waitUntil(() => intake.committed.length === people.length, 10_000);
    // Every message got its running card and its OK reaction, none of them over the limit.
    expect(fake.calls.filter((c) => c.operation === 'send' && c.code === 0)).toHaveLength(people.length);
    expect(fake.reactions).toHaveLength(people.length);
    expect(fake.appRateViolations).toEqual([]);
  });

  it('handles the same event delivered twice once, and acks both frames', async () => {
    const started = await startFeishu();
    const { fake, intake } = started;
    const first = fake.sendUserMessage({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: 'once', eventId: 'ev_dup' });
    const event = fake.buildUserEvent({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: 'once', eventId: 'ev_dup' });
    await intake.waitUntil(() => intake.committed.length === 1);
    fake.pushEvent(event.event, 'ev_dup', first.messageId, P2P);
    await fake.waitFor(() => fake.events.find((e) => e.eventId === 'ev_dup' && e.pushes === 2 && e.acked));
    const { sent } = await sendAndCommit(started, 'after');
    expect(intake.committed.map((m) => m.messageId)).toEqual([first.messageId, sent.messageId]);
    expect(fake.botMessages(P2P).filter((m) => m.replyTo === first.messageId)).toHaveLength(1);
  });

  it('acks every frame at once, so the platform never redelivers', async () => {
    const started = await startFeishu();
    started.fake.redeliverAfterMs = 300;
    await sendAndCommit(started, 'quick ack');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(started.fake.events.map((e) => [e.acked, e.pushes])).toEqual([[true, 1]]);
  });

  it('start() rejects with a ChannelError on bad credentials and reports why', async () => {
    const { adapter } = await startFeishu({ isStarted: false, appSecret: 'wrong' });
    await expect(adapter.start()).rejects.toMatchObject({ name: 'ChannelError', code: 'CHANNEL_UNAUTHORIZED' });
    expect(adapter.status()).toMatchObject({ running: false, reason: expect.stringContaining('CHANNEL_UNAUTHORIZED') });
  });
});

describe('feishu replies', () => {
  it('refreshes an expired token mid-stream and finishes the same card', async () => {
    const started = await startFeishu();
    const { fake, adapter } = started;
    const { inbound } = await sendAndCommit(started, 'question');
    const reply = adapter.egress.reply(targetOf(inbound));
    reply.update('part one');
    await fake.waitFor(() => fake.botMessages(P2P).some((m) => m.text === 'part one'));
    fake.expireTokens();
    reply.update('part one and two');
    await reply.finish('the whole answer', { failed: false });
    const messages = fake.botMessages(P2P);
    expect(messages.map((m) => m.text)).toEqual(['the whole answer']);
    expect(fake.calls.filter((c) => c.code === 99991663).length).toBeGreaterThan(0);
    expect(fake.calls.filter((c) => c.operation === 'token').length).toBeGreaterThanOrEqual(2);
    expect(fake.reactions.filter((r) => r.messageId === inbound.messageId).map((r) => r.emoji)).toEqual(['OK', 'DONE']);
  });

  it('shows a code block a split cut as code on both cards, closed on one and reopened on the next', async () => {
    const started = await startFeishu();
    const { fake, adapter } = started;
    const { inbound } = await sendAndCommit(started, 'a long script?');
    const lines = Array.from({ length: Math.ceil(FEISHU_LIMITS.maxMessageChars / 10) }, (_, i) => `  echo ${i} && x < y`);
    await adapter.egress.reply(targetOf(inbound)).finish(`Here:\n\n\`\`\`sh\n${lines.join('\n')}\n\`\`\`\n\nDone.`);
    const cards = fake.botMessages(P2P);
    expect(cards.length).toBeGreaterThan(1);
    const shown = cards.map((m) => displayMessage(m.msgType, m.text).shown);
    expect(shown.join('\n').split('\n').filter((line) => line !== '')).toEqual(['Here:', ...lines, 'Done.']);
  });

  it('streams into a CardKit card with increasing sequences and closes streaming mode at the end', async () => {
    const started = await startFeishu();
    const { fake, adapter } = started;
    const { inbound } = await sendAndCommit(started, 'question');
    const [card] = [...fake.cards.values()];
    expect(card?.isStreaming).toBe(true);
    const reply = adapter.egress.reply(targetOf(inbound));
    reply.update('one');
    await fake.waitFor(() => fake.botMessages(P2P).some((m) => m.text === 'one'));
    reply.update('one two');
    await reply.finish('one two three');
    expect(card?.isStreaming).toBe(false);
    const sequences = fake.calls.filter((c) => c.path.startsWith('/open-apis/cardkit/v1/cards/') && c.code === 0).map((c) => Number(c.body.sequence));
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(fake.botMessages(P2P).map((m) => m.text)).toEqual(['one two three']);
    expect(fake.calls.filter((c) => c.method === 'PATCH' && c.path.startsWith('/open-apis/im/'))).toEqual([]);
  });

  it('falls back to a patched interactive card when CardKit refuses the card', async () => {
    const started = await startFeishu();
    const { fake, adapter } = started;
    fake.failNext('card', { kind: 'business', code: 99991672 });
    const { inbound } = await sendAndCommit(started, 'question');
    expect(fake.cards.size).toBe(0);
    const reply = adapter.egress.reply(targetOf(inbound));
    reply.update('partial');
    await reply.finish('final');
    expect(fake.botMessages(P2P).map((m) => [m.msgType, m.text])).toEqual([['interactive', 'final']]);
    expect(fake.calls.filter((c) => c.method === 'PATCH' && c.path.startsWith('/open-apis/im/')).length).toBeGreaterThan(0);
  });

  it('posts the final as a new reply card when patching the card fails with a business error', async () => {
    const started = await startFeishu();
    const { fake, adapter } = started;
    const { inbound } = await sendAndCommit(started, 'question');
    const reply = adapter.egress.reply(targetOf(inbound));
    fake.failNext('patch', { kind: 'business', code: 230099 });
    await reply.finish('final answer');
    const texts = fake.botMessages(P2P).map((m) => [m.text, m.replyTo]);
    expect(texts).toContainEqual(['final answer', inbound.messageId]);
  });

  it('completes a reply while the long connection drops, and reconnects', async () => {
    const started = await startFeishu();
    const { fake, adapter, intake } = started;
    const { inbound } = await sendAndCommit(started, 'question');
    const reply = adapter.egress.reply(targetOf(inbound));
    reply.update('halfway');
    fake.dropConnections();
    reply.update('almost');
    await reply.finish('done after the drop');
    expect(fake.botMessages(P2P).map((m) => m.text)).toEqual(['done after the drop']);
    // As Feishu does, an event nobody acked is pushed again: one sent while the SDK is still wiring
    // its new socket (it attaches its listener after the handshake) is not lost.
    fake.redeliverAfterMs = 1000;
    await fake.waitFor(() => fake.connectionCount() > 0, 15_000);
    const again = fake.sendUserMessage({ chatId: P2P, chatType: 'p2p', openId: ALICE, text: 'still there?' });
    await intake.waitUntil(() => intake.committed.some((m) => m.messageId === again.messageId), 10_000);
    expect(intake.committed.filter((m) => m.messageId === again.messageId)).toHaveLength(1);
  }, 30_000);
});

describe('feishu group conversations', () => {
  const BOB = 'ou_bob0000000000000000000000000002';

  it("takes the asker's next plain group message as the answer to the agent's question, once", async () => {
    const started = await startFeishu();
    const asked = await groupMessage(started, { openId: ALICE, text: 'deploy it' });
    await started.adapter.egress.reply(targetOf(asked)).finish('Staging or production?', { failed: false, awaitsAnswer: true });
    const bobsMessage = await groupMessage(started, { openId: BOB, text: 'unrelated' });
    const answer = await groupMessage(started, { openId: ALICE, text: 'staging' });
    const next = await groupMessage(started, { openId: ALICE, text: 'a new subject' });
    expect([bobsMessage.topicId, answer.topicId, next.topicId]).toEqual([bobsMessage.messageId, asked.topicId, next.messageId]);
    expect(answer.platformData).toMatchObject({ answersQuestion: true });
    // The answer's card replies to the answer; a reply to that card stays in the conversation.
    await started.adapter.egress.reply(targetOf(answer)).finish('Deploying to staging.', { failed: false });
    const card = started.fake.botMessages(GROUP).find((m) => m.replyTo === answer.messageId && m.text === 'Deploying to staging.');
    const followUp = await groupMessage(started, { openId: BOB, text: 'done yet?', parentId: card?.messageId as string });
    expect(followUp.topicId).toBe(asked.topicId);
  });

  it('does not wait for an answer to a question that never showed', async () => {
    const started = await startFeishu();
    const asked = await groupMessage(started, { openId: ALICE, text: 'deploy it' });
    // The card update fails, then the new card replacing it: the question never showed.
    started.fake.failNext('patch', { kind: 'business', code: 230002 });
    started.fake.failNext('send', { kind: 'business', code: 230002 });
    await expect(started.adapter.egress.reply(targetOf(asked)).finish('Staging or production?', { failed: false, awaitsAnswer: true })).rejects.toThrow();
    const later = await groupMessage(started, { openId: ALICE, text: 'staging' });
    expect(later.topicId).toBe(later.messageId);
  });

  it('quotes the message it answers at the top of the card, inside a group topic only', async () => {
    const started = await startFeishu();
    const root = await groupMessage(started, { openId: ALICE, text: 'first question' });
    await started.adapter.egress.reply(targetOf(root)).finish('First answer.', { failed: false });
    const rootCard = started.fake.botMessages(GROUP).find((m) => m.replyTo === root.messageId);
    expect(rootCard?.text).toBe('First answer.');
    const inTopic = await groupMessage(started, { openId: BOB, text: 'line one\nline two\nline three\nline four', parentId: rootCard?.messageId as string });
    const runningCard = started.fake.botMessages(GROUP).find((m) => m.replyTo === inTopic.messageId);
    expect(runningCard?.text).toMatch(/^> line one\n> line two\n> line three\n\n/);
    const reply = started.adapter.egress.reply(targetOf(inTopic));
    reply.update('Partial');
    await reply.finish('Second answer.', { failed: false });
    expect(started.fake.botMessages(GROUP).find((m) => m.replyTo === inTopic.messageId)?.text).toBe('> line one\n> line two\n> line three\n\nSecond answer.');
  });
});
