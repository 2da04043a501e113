import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FILE_BATCH_WINDOW_MS, FileBatches, isLoneFile, mergeBatch } from '../../../../channels/feishu/file-batch.js';
import type { PendingInbound } from '../../../../src/channel/ingress/decision.js';

let nextId = 1;
function message(overrides: Partial<PendingInbound> = {}): PendingInbound {
  const messageId = `om_${nextId++}`;
  return {
    channel: 'feishu',
    chatId: 'oc_chat',
    userId: 'ou_alice',
    messageId,
    text: '[image]',
    kind: 'chat',
    isPrivateChat: true,
    files: [{ name: `${messageId}.png`, mimeType: 'image/png', isImage: true, ref: messageId }],
    platformData: {},
    ...overrides,
  };
}

describe('isLoneFile', () => {
  it('is a single image or file outside any reply chain', () => {
    expect(isLoneFile(message())).toBe(true);
    expect(isLoneFile(message({ text: '[file]' }))).toBe(true);
    expect(isLoneFile(message({ platformData: { parentId: 'om_x', rootId: 'om_x' } }))).toBe(false);
    expect(isLoneFile(message({ platformData: { threadId: 'omt_x' } }))).toBe(false);
    expect(isLoneFile(message({ text: 'see [image]' }))).toBe(false);
    expect(isLoneFile(message({ text: 'hello', files: [] }))).toBe(false);
    const [one] = message().files ?? [];
    expect(isLoneFile(message({ text: '[image]', files: [one!, one!] }))).toBe(false);
  });
});

describe('mergeBatch', () => {
  it("keeps the first message's ids, joins texts by blank lines, files in order, and lists every message", () => {
    const [a, b, c] = [message(), message({ text: '[file]' }), message()];
    const merged = mergeBatch([a, b, c]);
    expect(merged).toMatchObject({ messageId: a.messageId, chatId: a.chatId, text: '[image]\n\n[file]\n\n[image]' });
    expect(merged.files?.map((file) => file.ref)).toEqual([a.messageId, b.messageId, c.messageId]);
    expect(merged.platformData?.batchedMessageIds).toEqual([a.messageId, b.messageId, c.messageId]);
    expect(mergeBatch([a])).toBe(a);
  });
});

describe('FileBatches', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("merges one person's files within the window of the first, received when the first was, and starts a new batch after it", async () => {
    const admitted: [PendingInbound, number][] = [];
    const batches = new FileBatches(async (merged, receivedAt) => {
      admitted.push([merged, receivedAt]);
      return true;
    });
    const first = batches.add(message(), 1);
    await vi.advanceTimersByTimeAsync(FILE_BATCH_WINDOW_MS - 100);
    const second = batches.add(message(), 2);
    const othersFile = batches.add(message({ userId: 'ou_bob' }), 3);
    const otherChat = batches.add(message({ chatId: 'oc_other' }), 4);
    await vi.advanceTimersByTimeAsync(100);
    expect(await Promise.all([first, second])).toEqual([true, true]);
    const late = batches.add(message(), 5);
    await vi.advanceTimersByTimeAsync(FILE_BATCH_WINDOW_MS);
    await Promise.all([othersFile, otherChat, late]);
    expect(admitted.map(([m, receivedAt]) => [m.chatId, m.userId, m.files?.length, receivedAt])).toEqual([
      ['oc_chat', 'ou_alice', 2, 1],
      ['oc_chat', 'ou_bob', 1, 3],
      ['oc_other', 'ou_alice', 1, 4],
      ['oc_chat', 'ou_alice', 1, 5],
    ]);
  });

  it('gives every message of a batch the outcome of its admission, and admits open batches at once on closeAll', async () => {
    const batches = new FileBatches(async () => false);
    const results = Promise.all([batches.add(message(), 0), batches.add(message(), 0)]);
    batches.closeAll();
    expect(await results).toEqual([false, false]);
    const failing = new FileBatches(async () => {
      throw new Error('intake broken');
    });
    const failed = failing.add(message(), 0);
    failing.closeAll();
    await expect(failed).rejects.toThrow('intake broken');
  });
});
