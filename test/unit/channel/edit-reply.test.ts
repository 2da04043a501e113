import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { continuedUnder, createEditReply, type EditPrimitives, type EditReplyOptions } from '../../../src/channel/edit-reply.js';
import { InProcessRateGate } from '../../../src/channel/rate-gate.js';
import { ChannelError } from '../../../src/errors.js';
import { createLogger, silentLogger } from '../../../src/logger.js';

/** An in-test chat behind the two primitives: records what a user would see and when. */
class FakeChat implements EditPrimitives {
  readonly messages = new Map<string, { history: string[]; replyTo?: string }>();
  readonly requests: { kind: 'send' | 'edit' | 'remove'; at: number; id: string; text: string }[] = [];
  /** Errors for the next requests, in order; `undefined` lets one through. */
  readonly failures: (Error | undefined)[] = [];
  /** Resolve requests only when released (to hold one in flight). */
  isHolding = false;
  private held: (() => void)[] = [];
  private nextId = 100;
  inFlight = 0;
  maxInFlight = 0;

  constructor(placeholderId?: string) {
    if (placeholderId) this.messages.set(placeholderId, { history: ['Working on it...'] });
  }

  async send(text: string, replyTo?: string): Promise<string> {
    return this.request(() => {
      const id = String(this.nextId++);
      this.requests.push({ kind: 'send', at: Date.now(), id, text });
      this.messages.set(id, { history: [text], ...(replyTo === undefined ? {} : { replyTo }) });
      return id;
    });
  }

  /** Set to leave out `remove` (a platform that cannot delete messages). */
  remove?: (id: string) => Promise<void> = async (id) =>
    this.request(() => {
      this.requests.push({ kind: 'remove', at: Date.now(), id, text: '' });
      if (!this.messages.delete(id)) throw new ChannelError('fake', 'CHANNEL_REJECTED', 'message to delete not found');
    });

  async edit(id: string, text: string): Promise<void> {
    return this.request(() => {
      this.requests.push({ kind: 'edit', at: Date.now(), id, text });
      const message = this.messages.get(id);
      if (!message) throw new ChannelError('fake', 'CHANNEL_REJECTED', 'message to edit not found');
      if (message.history.at(-1) !== text) message.history.push(text);
    });
  }

  release(): void {
    const held = this.held;
    this.held = [];
    for (const go of held) go();
  }

  text(id: string): string | undefined {
    return this.messages.get(id)?.history.at(-1);
  }

  private async request<T>(run: () => T): Promise<T> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.isHolding) await new Promise<void>((resolve) => this.held.push(resolve));
      const failure = this.failures.shift();
      if (failure) throw failure;
      return run();
    } finally {
      this.inFlight -= 1;
    }
  }
}

const rateLimited = (retryAfterMs: number) =>
  new ChannelError('fake', 'CHANNEL_RATE_LIMITED', 'too many requests', { retryAfterMs });
const rejected = () => new ChannelError('fake', 'CHANNEL_REJECTED', 'bad request');
const unavailable = () => new ChannelError('fake', 'CHANNEL_UNAVAILABLE', 'server error');

/** Options for a reply of chat `chat-1` answering message 7, with a gate of its own. */
function setupOptions(): EditReplyOptions {
  return {
    replyToMessageId: '7',
    maxChars: 20,
    minEditIntervalMs: 1000,
    gate: new InProcessRateGate({ now: Date.now }),
    gateKey: 'chat-1',
    now: Date.now,
    logger: silentLogger(),
  };
}

function setup(overrides: Partial<EditReplyOptions> & { placeholderId?: string } = {}) {
  const chat = new FakeChat(overrides.placeholderId);
  const gate = new InProcessRateGate({ now: Date.now });
  return { chat, gate, reply: createEditReply(chat, { ...setupOptions(), gate, ...overrides }) };
}

const flush = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('createEditReply: partial updates', () => {
  it('posts the first update as a reply to the user, then edits that message', async () => {
    const { chat, reply } = setup();
    reply.update('Hel');
    await flush();
    await vi.advanceTimersByTimeAsync(1000);
    reply.update('Hello');
    await vi.advanceTimersByTimeAsync(1000);
    expect(chat.requests.map((r) => [r.kind, r.text])).toEqual([
      ['send', 'Hel'],
      ['edit', 'Hello'],
    ]);
    expect(chat.messages.get('100')).toEqual({ history: ['Hel', 'Hello'], replyTo: '7' });
  });

  it('edits the placeholder when there is one, minEditIntervalMs after it was posted', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    reply.update('Hi');
    await vi.advanceTimersByTimeAsync(999);
    expect(chat.requests).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(chat.messages.get('55')?.history).toEqual(['Working on it...', 'Hi']);
    expect(chat.requests.filter((r) => r.kind === 'send')).toEqual([]);
  });

  it('a final that comes within minEditIntervalMs of the placeholder is its only edit', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    reply.update('Hel');
    reply.update('Hello');
    await vi.advanceTimersByTimeAsync(300);
    await reply.finish('Hello there');
    await vi.advanceTimersByTimeAsync(2000);
    expect(chat.requests.map((r) => [r.kind, r.text])).toEqual([['edit', 'Hello there']]);
  });

  it('coalesces: keeps only the latest text and never has two requests in flight', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    chat.isHolding = true;
    reply.update('a');
    await vi.advanceTimersByTimeAsync(1000);
    reply.update('ab');
    reply.update('abc');
    reply.update('abcd');
    await flush();
    expect(chat.inFlight).toBe(1);
    chat.isHolding = false;
    chat.release();
    await vi.advanceTimersByTimeAsync(1000);
    expect(chat.messages.get('55')?.history).toEqual(['Working on it...', 'a', 'abcd']);
    expect(chat.maxInFlight).toBe(1);
  });

  it('abandoned, sends nothing more: neither the partial waiting for its turn nor a final', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    chat.isHolding = true;
    reply.update('a');
    await vi.advanceTimersByTimeAsync(1000);
    reply.update('ab');
    reply.abandon();
    reply.update('abc');
    chat.isHolding = false;
    chat.release();
    await reply.finish('the final');
    await vi.advanceTimersByTimeAsync(5000);
    // The edit already in flight lands; nothing after it.
    expect(chat.messages.get('55')?.history).toEqual(['Working on it...', 'a']);
    expect(chat.requests.map((r) => r.text)).toEqual(['a']);
  });

  it('spaces requests at least minEditIntervalMs apart', async () => {
    const { chat, reply } = setup({ placeholderId: '55', minEditIntervalMs: 3000 });
    for (let i = 1; i <= 12; i++) {
      reply.update(`t${i}`);
      await vi.advanceTimersByTimeAsync(700);
    }
    await vi.advanceTimersByTimeAsync(3000);
    const times = chat.requests.map((r) => r.at);
    expect(times.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(3000);
    expect(chat.text('55')).toBe('t12');
  });

  it('skips text the message already shows, and blank text', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    reply.update('same');
    await vi.advanceTimersByTimeAsync(1000);
    reply.update('same');
    await vi.advanceTimersByTimeAsync(1000);
    reply.update('   ');
    await vi.advanceTimersByTimeAsync(1000);
    expect(chat.requests.map((r) => r.text)).toEqual(['same']);
  });

  it('truncates partials over maxChars to maxChars-1 characters and …', async () => {
    const { chat, reply } = setup({ placeholderId: '55', maxChars: 10 });
    reply.update('0123456789abc');
    await vi.advanceTimersByTimeAsync(1000);
    expect(chat.text('55')).toBe('012345678…');
  });

  it('on a rate limit: drops the partial and sends nothing until retryAfterMs has passed', async () => {
    const { chat, gate, reply } = setup({ placeholderId: '55' });
    await vi.advanceTimersByTimeAsync(1000);
    chat.failures.push(rateLimited(5000));
    const limitedAt = Date.now();
    reply.update('dropped');
    await flush();
    expect(gate.isOpen('chat-1')).toBe(false);
    reply.update('later');
    await vi.advanceTimersByTimeAsync(4900);
    expect(chat.requests).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(chat.requests.map((r) => r.text)).toEqual(['later']);
    expect(chat.requests[0]!.at).toBeGreaterThanOrEqual(limitedAt + 5000);
    expect(chat.messages.get('55')?.history).toEqual(['Working on it...', 'later']);
  });

  it('after a failed edit, streams into a new message replying to the user', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    chat.failures.push(rejected());
    reply.update('one');
    await flush();
    await vi.advanceTimersByTimeAsync(1000);
    reply.update('two');
    await vi.advanceTimersByTimeAsync(1000);
    expect(chat.text('55')).toBe('Working on it...');
    expect(chat.messages.get('100')).toEqual({ history: ['two'], replyTo: '7' });
  });
});

describe('createEditReply: finish', () => {
  it('drops pending partials and replaces the stream message with the final text', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    reply.update('partial 1');
    await vi.advanceTimersByTimeAsync(1000);
    reply.update('partial 2');
    const done = reply.finish('final');
    reply.update('too late');
    await vi.advanceTimersByTimeAsync(1000);
    await done;
    expect(chat.messages.get('55')?.history).toEqual(['Working on it...', 'partial 1', 'final']);
  });

  it('waits for the request in flight before the final', async () => {
    const { chat, reply } = setup();
    chat.isHolding = true;
    reply.update('partial');
    await flush();
    const done = reply.finish('final');
    await flush();
    expect(chat.requests).toEqual([]);
    chat.isHolding = false;
    chat.release();
    await vi.advanceTimersByTimeAsync(1000);
    await done;
    expect(chat.requests.map((r) => [r.kind, r.id, r.text])).toEqual([
      ['send', '100', 'partial'],
      ['edit', '100', 'final'],
    ]);
    expect(chat.maxInFlight).toBe(1);
  });

  it('counts a final identical to what is shown as delivered', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    reply.update('all done');
    await flush();
    await reply.finish('all done');
    expect(chat.requests.map((r) => r.text)).toEqual(['all done']);
  });

  it('splits a long final: chunk 1 edits, the rest reply to the previous bot message', async () => {
    const { chat, reply } = setup({ placeholderId: '55', maxChars: 10 });
    const done = reply.finish('aaaaaaaaaabbbbbbbbbbcc');
    await vi.advanceTimersByTimeAsync(3000);
    await done;
    expect(chat.text('55')).toBe('aaaaaaaaaa');
    expect(chat.messages.get('100')).toEqual({ history: ['bbbbbbbbbb'], replyTo: '55' });
    expect(chat.messages.get('101')).toEqual({ history: ['cc'], replyTo: '100' });
  });

  it('without any stream message, posts the final as a reply to the user', async () => {
    const { chat, reply } = setup();
    await reply.finish('hi');
    expect(chat.messages.get('100')).toEqual({ history: ['hi'], replyTo: '7' });
  });

  it('sends chunk 1 as a new message when the final edit fails, and removes the stale placeholder', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    chat.failures.push(rejected());
    const done = reply.finish('final');
    await vi.advanceTimersByTimeAsync(1000);
    await done;
    expect(chat.messages.has('55')).toBe(false);
    expect([...chat.messages.values()]).toEqual([{ history: ['final'], replyTo: '7' }]);
    expect(reply.resumeAnchor()).toEqual({ messageId: '7', placeholderId: '100' });
  });

  it('removes a stale stream message with its cursor, not only a placeholder', async () => {
    const { chat, reply } = setup();
    reply.update('partial ▉');
    await flush();
    chat.failures.push(new ChannelError('fake', 'CHANNEL_UNAVAILABLE', 'server error'));
    await reply.finish('final');
    expect([...chat.messages.values()].map((m) => m.history.at(-1))).toEqual(['final']);
  });

  it('leaves the placeholder where the platform cannot remove messages, and still delivers the final', async () => {
    const chat = new FakeChat('55');
    chat.remove = undefined;
    const reply = createEditReply(chat, { placeholderId: '55', maxChars: 20, minEditIntervalMs: 1000, gate: new InProcessRateGate(), gateKey: 'c', now: Date.now, logger: silentLogger() });
    chat.failures.push(rejected());
    await reply.finish('final');
    expect(chat.text('55')).toBe('Working on it...');
    expect(chat.text('100')).toBe('final');
  });

  it('delivers the final even when the stale message cannot be removed (it is gone already)', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    chat.messages.delete('55');
    await reply.finish('final');
    expect(chat.requests.map((r) => r.kind)).toEqual(['edit', 'send', 'remove']);
    expect(chat.text('100')).toBe('final');
  });

  it('names the message it streams into as where a later final continues', async () => {
    const { reply } = setup({ placeholderId: '55' });
    expect(reply.resumeAnchor()).toEqual({ messageId: '7', placeholderId: '55' });
    const { reply: fresh, chat } = setup();
    expect(fresh.resumeAnchor()).toEqual({ messageId: '7' });
    fresh.update('partial');
    await flush();
    expect(chat.requests).toHaveLength(1);
    expect(fresh.resumeAnchor()).toEqual({ messageId: '7', placeholderId: '100' });
  });

  it('waits out rate limits on the final and still delivers it', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    chat.failures.push(rateLimited(2000), rateLimited(2000));
    const start = Date.now();
    const done = reply.finish('final');
    await vi.advanceTimersByTimeAsync(5000);
    await done;
    expect(chat.text('55')).toBe('final');
    expect(chat.requests.at(-1)!.at).toBeGreaterThanOrEqual(start + 4000);
  });

  it('leaves a final to the outbox at once when the platform asks it to wait longer than maxFinalWaitMs', async () => {
    const { chat, reply, gate } = setup({ placeholderId: '55', maxFinalWaitMs: 5000 });
    chat.failures.push(rateLimited(6000));
    await expect(reply.finish('final')).rejects.toMatchObject({ code: 'CHANNEL_RATE_LIMITED', retryAfterMs: 6000 });
    // One try, refused; no second one.
    expect(chat.failures).toEqual([]);
    expect(chat.text('55')).toBe('Working on it...');
    expect(gate.blockedUntil('chat-1')).toBe(Date.now() + 6000);
  });

  it('does not even try a final while the chat is blocked longer than maxFinalWaitMs', async () => {
    const { chat, reply, gate } = setup({ placeholderId: '55', maxFinalWaitMs: 5000 });
    gate.block('chat-1', 8000);
    await expect(reply.finish('final')).rejects.toMatchObject({ code: 'CHANNEL_RATE_LIMITED', retryAfterMs: 8000 });
    expect(chat.requests).toEqual([]);
  });

  it('rejects with the last ChannelError after finalAttempts rate limits', async () => {
    const { chat, reply } = setup({ placeholderId: '55', finalAttempts: 3 });
    chat.failures.push(rateLimited(1000), rateLimited(1000), rateLimited(1000), undefined);
    const done = reply.finish('final');
    const outcome = expect(done).rejects.toMatchObject({ code: 'CHANNEL_RATE_LIMITED', retryAfterMs: 1000 });
    await vi.advanceTimersByTimeAsync(5000);
    await outcome;
    expect(chat.text('55')).toBe('Working on it...');
  });

  it('rejects with a ChannelError when the fallback send also fails', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    chat.failures.push(rejected(), rejected());
    const outcome = expect(reply.finish('final')).rejects.toMatchObject({ name: 'ChannelError', code: 'CHANNEL_REJECTED' });
    await vi.advanceTimersByTimeAsync(1000);
    await outcome;
  });

  it('wraps a stranger error from a primitive into a ChannelError', async () => {
    const { chat, reply } = setup({ platform: 'fake' });
    chat.failures.push(new TypeError('boom'));
    await expect(reply.finish('final')).rejects.toMatchObject({
      name: 'ChannelError',
      code: 'CHANNEL_UNAVAILABLE',
      platform: 'fake',
    });
  });

  it('delivers nothing for a blank final', async () => {
    const { chat, reply } = setup({ placeholderId: '55' });
    await reply.finish('  \n ');
    expect(chat.requests).toEqual([]);
  });

  it('never writes message text to the logs', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const { chat, reply } = setup({ placeholderId: '55', logger: createLogger({ level: 'trace', destination }) });
    chat.failures.push(rateLimited(1000), rejected(), rejected());
    reply.update('SECRET-PARTIAL');
    await flush();
    await vi.advanceTimersByTimeAsync(1000);
    reply.update('SECRET-PARTIAL-2');
    await vi.advanceTimersByTimeAsync(1000);
    await reply.finish('SECRET-FINAL   \n ').catch(() => undefined);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.join('')).not.toContain('SECRET');
  });
});

describe('createEditReply: a final that failed part-way (issue #15)', () => {
  // Split at 14 characters on the newlines: 'part one.\n', 'part two.\n', 'part three.'.
  const final = 'part one.\npart two.\npart three.';

  it('tells what is not shown yet and that it continues after the last part shown', async () => {
    const { chat, reply } = setup({ placeholderId: '55', maxChars: 14 });
    chat.failures.push(undefined, unavailable());
    await expect(reply.finish(final)).rejects.toMatchObject({ code: 'CHANNEL_UNAVAILABLE' });
    expect(chat.messages.get('55')?.history).toEqual(['Working on it...', 'part one.\n']);
    expect(reply.finalLeft()).toEqual({ text: 'part two.\npart three.', anchor: { messageId: '55' } });
  });

  it('a later reply at that anchor sends only the rest, replying to the last part, and edits nothing shown', async () => {
    const { chat, reply } = setup({ placeholderId: '55', maxChars: 14 });
    chat.failures.push(undefined, unavailable());
    await reply.finish(final).catch(() => undefined);
    const left = reply.finalLeft();

    // The retry fails again after one more part.
    const again = createEditReply(chat, { ...setupOptions(), maxChars: 14, replyToMessageId: left?.anchor.messageId as string });
    chat.failures.push(undefined, unavailable());
    await expect(again.finish(left?.text as string)).rejects.toMatchObject({ code: 'CHANNEL_UNAVAILABLE' });
    expect(again.finalLeft()).toEqual({ text: 'part three.', anchor: { messageId: '100' } });

    const last = again.finalLeft();
    await createEditReply(chat, { ...setupOptions(), maxChars: 14, replyToMessageId: last?.anchor.messageId as string }).finish(last?.text as string);
    expect([...chat.messages.entries()]).toEqual([
      ['55', { history: ['Working on it...', 'part one.\n'] }],
      ['100', { history: ['part two.\n'], replyTo: '55' }],
      ['101', { history: ['part three.'], replyTo: '100' }],
    ]);
    expect(chat.requests.filter((r) => r.kind === 'edit').map((r) => r.text)).toEqual(['part one.\n']);
  });

  it('continues after the message chunk 1 was posted as when the final edit failed', async () => {
    const { chat, reply } = setup({ placeholderId: '55', maxChars: 14 });
    // edit 55, then send part one, remove 55, send part two.
    chat.failures.push(rejected(), undefined, undefined, unavailable());
    await expect(reply.finish(final)).rejects.toMatchObject({ code: 'CHANNEL_UNAVAILABLE' });
    expect(chat.text('100')).toBe('part one.\n');
    expect(reply.finalLeft()).toEqual({ text: 'part two.\npart three.', anchor: { messageId: '100' } });
  });

  it('tells that nothing is shown when the first part did not go out, so the whole final is sent again', async () => {
    const { chat, reply } = setup({ placeholderId: '55', maxChars: 14, maxFinalWaitMs: 5000 });
    expect(reply.finalLeft()).toBeUndefined();
    chat.failures.push(rateLimited(6000));
    await expect(reply.finish(final)).rejects.toMatchObject({ code: 'CHANNEL_RATE_LIMITED' });
    expect(reply.finalLeft()).toBeUndefined();
    expect(reply.resumeAnchor()).toEqual({ messageId: '7', placeholderId: '55' });
  });

  it.each([
    { left: undefined, messageId: '7', expected: undefined },
    { left: { text: 'rest', anchor: { messageId: '101' } }, messageId: '7', expected: { text: 'rest', anchor: { messageId: '7' } } },
    { left: { text: 'rest', anchor: { messageId: '101' } }, messageId: undefined, expected: { text: 'rest', anchor: {} } },
  ])('continuedUnder($messageId) keeps the rest and moves its anchor to the message answered', ({ left, messageId, expected }) => {
    expect(continuedUnder(left, messageId)).toEqual(expected);
  });
});
