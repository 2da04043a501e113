import { beforeEach, describe, expect, it } from 'vitest';
import { sourcePreview, withSourcePreview } from '../../../../channels/feishu/render.js';
import { type GroupMessageIds, GroupTopics, PENDING_QUESTION_TTL_MS } from '../../../../channels/feishu/topics.js';
import type { JsonValue } from '../../../../src/channel/types.js';
import { silentLogger } from '../../../../src/logger.js';
import { MemoryChannelState } from '../../../helpers/channel-deps.js';

const CHAT = 'oc_group';
const ALICE = 'ou_alice';
const BOB = 'ou_bob';

describe('GroupTopics', () => {
  let state: MemoryChannelState;
  let now: number;
  let topics: GroupTopics;
  let nextId: number;
  const plain = (userId: string, overrides: Partial<GroupMessageIds> = {}): GroupMessageIds => ({
    chatId: CHAT,
    userId,
    messageId: `om_${nextId++}`,
    isCommand: false,
    ...overrides,
  });

  beforeEach(() => {
    state = new MemoryChannelState();
    now = 1_000_000;
    topics = new GroupTopics(state, silentLogger(), () => now);
    nextId = 1;
  });

  it('starts a conversation per top-level message, and a reply joins its root', async () => {
    const first = plain(ALICE);
    expect(await topics.choose(first)).toEqual({ topicId: first.messageId, answersQuestion: false });
    expect(await topics.choose(plain(BOB, { rootId: first.messageId, parentId: 'om_card' }))).toEqual({ topicId: first.messageId, answersQuestion: false });
    expect(await topics.choose(plain(BOB, { threadId: 'omt_topic' }))).toEqual({ topicId: 'omt_topic', answersQuestion: false });
  });

  it("makes the asker's next plain message the answer, once", async () => {
    await topics.awaitAnswer(CHAT, ALICE, 'om_question_topic');
    const answer = plain(ALICE);
    expect(await topics.choose(answer)).toEqual({ topicId: 'om_question_topic', answersQuestion: true });
    expect(await topics.choose(plain(ALICE))).toMatchObject({ answersQuestion: false });
    // Replies to the answer (or to the card answering it) stay in the question's conversation.
    expect(await topics.choose(plain(BOB, { rootId: answer.messageId, parentId: 'om_card' }))).toEqual({ topicId: 'om_question_topic', answersQuestion: false });
    expect([...state.entries.keys()].filter((key) => key.startsWith('question:'))).toEqual([]);
  });

  it('answers questions oldest first', async () => {
    await topics.awaitAnswer(CHAT, ALICE, 'topic_a');
    await topics.awaitAnswer(CHAT, ALICE, 'topic_b');
    expect((await topics.choose(plain(ALICE))).topicId).toBe('topic_a');
    expect((await topics.choose(plain(ALICE))).topicId).toBe('topic_b');
  });

  it('lets a question expire after 30 minutes', async () => {
    await topics.awaitAnswer(CHAT, ALICE, 'topic_old');
    now += PENDING_QUESTION_TTL_MS + 1;
    await topics.awaitAnswer(CHAT, ALICE, 'topic_new');
    expect((await topics.choose(plain(ALICE))).topicId).toBe('topic_new');
    now += PENDING_QUESTION_TTL_MS + 1;
    await topics.awaitAnswer(CHAT, BOB, 'topic_bob');
    now += PENDING_QUESTION_TTL_MS + 1;
    const late = plain(BOB);
    expect(await topics.choose(late)).toEqual({ topicId: late.messageId, answersQuestion: false });
  });

  it('is not answered by commands, by someone else, in another chat, or by an explicit reply', async () => {
    await topics.awaitAnswer(CHAT, ALICE, 'topic_q');
    const command = plain(ALICE, { isCommand: true });
    expect(await topics.choose(command)).toEqual({ topicId: command.messageId, answersQuestion: false });
    expect((await topics.choose(plain(BOB))).answersQuestion).toBe(false);
    expect((await topics.choose(plain(ALICE, { chatId: 'oc_other' }))).answersQuestion).toBe(false);
    const reply = plain(ALICE, { rootId: 'om_elsewhere', parentId: 'om_elsewhere' });
    expect(await topics.choose(reply)).toEqual({ topicId: 'om_elsewhere', answersQuestion: false });
    expect(await topics.choose(plain(ALICE))).toEqual({ topicId: 'topic_q', answersQuestion: true });
  });

  it('keeps two questions asked at the same instant', async () => {
    await Promise.all([topics.awaitAnswer(CHAT, ALICE, 'topic_1'), topics.awaitAnswer(CHAT, ALICE, 'topic_2')]);
    const answered = [(await topics.choose(plain(ALICE))).topicId, (await topics.choose(plain(ALICE))).topicId];
    expect(answered.sort()).toEqual(['topic_1', 'topic_2']);
  });

  it("falls back to Feishu's ids when its state cannot be read, and ignores malformed entries", async () => {
    state.entries.set(`question:${CHAT}:${ALICE}`, [{ topicId: 42 }, 'junk', null] as JsonValue);
    const message = plain(ALICE);
    expect(await topics.choose(message)).toEqual({ topicId: message.messageId, answersQuestion: false });
    state.get = async () => {
      throw new Error('database down');
    };
    const reply = plain(BOB, { rootId: 'om_root', parentId: 'om_root' });
    expect(await topics.choose(reply)).toEqual({ topicId: 'om_root', answersQuestion: false });
    await expect(topics.awaitAnswer(CHAT, ALICE, 'topic_x')).resolves.toBeUndefined();
  });
});

describe('sourcePreview', () => {
  it('keeps the first three non-empty lines', () => {
    expect(sourcePreview('one\n\n  two  \nthree\nfour')).toBe('one\ntwo\nthree');
  });

  it('cuts at 240 characters with an ellipsis, never inside an emoji', () => {
    const long = '😀'.repeat(300);
    const preview = sourcePreview(long);
    expect(Array.from(preview)).toHaveLength(240);
    expect(preview.endsWith('😀...')).toBe(true);
    expect(sourcePreview('x'.repeat(240))).toBe('x'.repeat(240));
  });

  it('quotes the preview above the card text', () => {
    expect(withSourcePreview('The answer.', 'what is\nthe answer?')).toBe('> what is\n> the answer?\n\nThe answer.');
    expect(withSourcePreview('The answer.', undefined)).toBe('The answer.');
  });
});
