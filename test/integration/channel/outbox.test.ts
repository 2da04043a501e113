import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEditReply } from '../../../src/channel/edit-reply.js';
import { Outbox, type OutboxMetrics, type PendingDelivery } from '../../../src/channel/outbox.js';
import { InProcessRateGate } from '../../../src/channel/rate-gate.js';
import type { ChannelEgress, ChannelFiles, OutboundFile, Reply, ReplyOutcome, ReplyTarget } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { SqlOutboxStore } from '../../../src/db/repos/outbox-repo.js';
import { outbox as outboxTable } from '../../../src/db/schema/index.js';
import { ChannelError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { openTestDatabase, testDatabaseKinds } from '../../helpers/database.js';

/**
 * The outbox against a real database (PGlite, and PostgreSQL when `DATABASE_URL` is set) and an
 * in-test platform that refuses what it is told to: what a person would see is `chat.shown`.
 */

const rateLimited = (retryAfterMs: number) => new ChannelError('fake', 'CHANNEL_RATE_LIMITED', 'Too Many Requests', { retryAfterMs });
const unavailable = () => new ChannelError('fake', 'CHANNEL_UNAVAILABLE', 'Bad Gateway');
const rejected = () => new ChannelError('fake', 'CHANNEL_REJECTED', 'chat not found');

/** What a chat shows, and the platform's answers to the next requests. */
class FakePlatform implements ChannelEgress, ChannelFiles {
  /** Finals delivered, with the message they finished (the anchor's placeholder) and their outcome. */
  readonly finals: { text: string; placeholderId?: string; outcome?: ReplyOutcome }[] = [];
  readonly filesSent: string[] = [];
  /** Errors for the next final or file requests, in order. */
  readonly failures: Error[] = [];
  /** While set, every request fails with it. */
  outage: Error | undefined;

  reply(target: ReplyTarget): Reply {
    return {
      update: () => undefined,
      finish: async (text, outcome) => {
        this.fail();
        this.finals.push({ text, ...(target.replyTo.placeholderId === undefined ? {} : { placeholderId: target.replyTo.placeholderId }), ...(outcome === undefined ? {} : { outcome }) });
      },
      // The reply streamed into message 900 before its final failed.
      resumeAnchor: () => ({ ...target.replyTo, placeholderId: '900' }),
    };
  }

  async download(): Promise<Uint8Array> {
    throw new Error('not used');
  }

  async send(_target: ReplyTarget, file: OutboundFile): Promise<void> {
    this.fail();
    this.filesSent.push(file.name);
  }

  private fail(): void {
    if (this.outage) throw this.outage;
    const failure = this.failures.shift();
    if (failure) throw failure;
  }
}

/**
 * A platform behind a real edit-style reply that splits finals at 14 characters (waiting out no
 * rate limit over 100 ms in the turn): `messages` is what the chat shows, in the order the
 * messages appeared, with every text each was sent or edited to.
 */
class SplitChat implements ChannelEgress, ChannelFiles {
  /** Message 8 is the placeholder of `target`. */
  readonly messages: { id: string; texts: string[]; replyTo?: string }[] = [{ id: '8', texts: ['Working on it...'] }];
  /** Errors for the next send or edit requests, in order; `undefined` lets one through. */
  readonly failures: (Error | undefined)[] = [];
  private readonly gate = new InProcessRateGate();
  private nextId = 100;

  reply(target: ReplyTarget): Reply {
    const primitives = {
      send: async (text: string, replyTo?: string) => {
        this.fail();
        const id = String(this.nextId++);
        this.messages.push({ id, texts: [text], ...(replyTo === undefined ? {} : { replyTo }) });
        return id;
      },
      edit: async (id: string, text: string) => {
        this.fail();
        const message = this.messages.find((shown) => shown.id === id);
        if (!message) throw rejected();
        message.texts.push(text);
      },
    };
    return createEditReply(primitives, {
      placeholderId: target.replyTo.placeholderId,
      replyToMessageId: target.replyTo.messageId,
      maxChars: 14,
      minEditIntervalMs: 0,
      gate: this.gate,
      gateKey: target.chatId,
      now: Date.now,
      logger: silentLogger(),
      maxFinalWaitMs: 100,
      platform: 'fake',
    });
  }

  async download(): Promise<Uint8Array> {
    throw new Error('not used');
  }

  async send(): Promise<void> {}

  private fail(): void {
    const failure = this.failures.shift();
    if (failure) throw failure;
  }
}

/** Split at 14 characters on its newlines: 'part one.\n', 'part two.\n', 'part three.'. */
const threePartFinal = 'part one.\npart two.\npart three.';
/** Each part exactly once, in order, each after the previous: the placeholder shows part one. */
const threePartsShown = [
  { id: '8', texts: ['Working on it...', 'part one.\n'] },
  { id: '100', texts: ['part two.\n'], replyTo: '8' },
  { id: '101', texts: ['part three.'], replyTo: '100' },
];

const target: ReplyTarget = { chatId: 'chat-1', isPrivateChat: true, replyTo: { messageId: '7', placeholderId: '8' } };
const file = (name: string): OutboundFile => ({ hostPath: `/nowhere/${name}`, name, mimeType: 'text/plain', isImage: false, size: 3 });

function recordingMetrics(): OutboxMetrics & { events: string[] } {
  const events: string[] = [];
  return { events, outboxEvent: (channel, event) => events.push(`${channel}:${event}`) };
}

describe.each(testDatabaseKinds())('the outbox on %s', (kind) => {
  let database: DatabaseHandle;
  let store: SqlOutboxStore;
  const running: Outbox[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    store = new SqlOutboxStore(database.db);
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((outbox) => outbox.stop()));
    await database.db.delete(outboxTable);
  });
  afterAll(() => database.close());

  function startOutbox(platform: ChannelEgress & ChannelFiles, options: { deadlineMs?: number; metrics?: OutboxMetrics; pollMs?: number } = {}): Outbox {
    const outbox = new Outbox({
      store,
      channel: (name) => (name === 'fake' ? { egress: platform, files: platform } : undefined),
      logger: silentLogger(),
      deadlineMs: options.deadlineMs ?? 60_000,
      pollMs: options.pollMs ?? 50,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
    outbox.start();
    running.push(outbox);
    return outbox;
  }

  const finalOf = (outbox: Outbox, platform: FakePlatform) => outbox.durable('fake', target, platform.reply(target));

  it('delivers a final at once when the platform takes it, keeping nothing', async () => {
    const platform = new FakePlatform();
    const outbox = startOutbox(platform);
    await finalOf(outbox, platform).finish('answer', { failed: false }, [file('a.txt')]);
    expect(platform.finals).toEqual([{ text: 'answer', placeholderId: '8', outcome: { failed: false } }]);
    expect(platform.filesSent).toEqual(['a.txt']);
    expect(await outbox.counts()).toEqual({ pending: 0, dead: 0 });
  });

  it('keeps a final the platform rate-limited and delivers it after retry_after, in the message it streamed into', async () => {
    const platform = new FakePlatform();
    const metrics = recordingMetrics();
    const outbox = startOutbox(platform, { metrics });
    platform.failures.push(rateLimited(300));
    const startedAt = Date.now();
    await finalOf(outbox, platform).finish('answer', { failed: false }, [file('a.txt')]);
    expect(platform.finals).toEqual([]);
    expect(await outbox.counts()).toEqual({ pending: 1, dead: 0 });
    await vi.waitFor(() => expect(platform.finals).toHaveLength(1), { timeout: 30_000, interval: 20 });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(300);
    expect(platform.finals).toEqual([{ text: 'answer', placeholderId: '900', outcome: { failed: false } }]);
    await vi.waitFor(() => expect(platform.filesSent).toEqual(['a.txt']), { timeout: 30_000, interval: 20 });
    await vi.waitFor(async () => expect(await outbox.counts()).toEqual({ pending: 0, dead: 0 }), { timeout: 30_000, interval: 20 });
    expect(metrics.events).toEqual(['fake:kept', 'fake:delivered']);
  });

  it('sends only the files left when one failed after the final, in their order', async () => {
    const platform = new FakePlatform();
    const outbox = startOutbox(platform);
    const reply = finalOf(outbox, platform);
    // Final and a.txt go through; b.txt meets an outage.
    const sendFile = platform.send.bind(platform);
    let calls = 0;
    platform.send = async (to, sent) => {
      if (++calls === 2) throw unavailable();
      return sendFile(to, sent);
    };
    await reply.finish('answer', undefined, [file('a.txt'), file('b.txt'), file('c.txt')]);
    await vi.waitFor(() => expect(platform.filesSent).toEqual(['a.txt', 'b.txt', 'c.txt']), { timeout: 30_000, interval: 20 });
    expect(platform.finals.map((f) => f.text)).toEqual(['answer']);
    await vi.waitFor(async () => expect(await outbox.counts()).toEqual({ pending: 0, dead: 0 }), { timeout: 30_000, interval: 20 });
  });

  it('makes a final the platform refuses for good a dead letter at once, and sends it again on retry', async () => {
    const platform = new FakePlatform();
    const metrics = recordingMetrics();
    const outbox = startOutbox(platform, { metrics });
    platform.failures.push(rejected());
    await finalOf(outbox, platform).finish('answer');
    expect(await outbox.counts()).toEqual({ pending: 0, dead: 1 });
    const [letter] = await outbox.list('dead');
    expect(letter).toMatchObject({ channel: 'fake', text: 'answer', lastError: 'CHANNEL_REJECTED: chat not found' });
    expect(letter?.deadAt).toBeDefined();
    expect(platform.finals).toEqual([]);

    expect(await outbox.retryDead(letter?.id as number)).toBe(1);
    await vi.waitFor(() => expect(platform.finals.map((f) => f.text)).toEqual(['answer']), { timeout: 30_000, interval: 20 });
    await vi.waitFor(async () => expect(await outbox.counts()).toEqual({ pending: 0, dead: 0 }), { timeout: 30_000, interval: 20 });
    expect(metrics.events).toEqual(['fake:dead', 'fake:delivered']);
  });

  it('makes a final a dead letter once its deadline passed in an outage, and never sends it twice', async () => {
    const platform = new FakePlatform();
    const metrics = recordingMetrics();
    const outbox = startOutbox(platform, { metrics, deadlineMs: 1500 });
    platform.outage = unavailable();
    await finalOf(outbox, platform).finish('answer');
    await vi.waitFor(async () => expect(await outbox.counts()).toEqual({ pending: 0, dead: 1 }), { timeout: 30_000, interval: 50 });
    const [letter] = await outbox.list('dead');
    expect(letter?.attempts).toBeGreaterThanOrEqual(2);
    expect(letter?.lastError).toBe('CHANNEL_UNAVAILABLE: Bad Gateway');
    expect(metrics.events).toEqual(['fake:kept', 'fake:dead']);

    platform.outage = undefined;
    expect(await outbox.retryDead('all')).toBe(1);
    expect(await outbox.retryDead('all')).toBe(0);
    await vi.waitFor(() => expect(platform.finals.map((f) => f.text)).toEqual(['answer']), { timeout: 30_000, interval: 20 });
    await vi.waitFor(async () => expect(await outbox.counts()).toEqual({ pending: 0, dead: 0 }), { timeout: 30_000, interval: 20 });
    expect(platform.finals).toHaveLength(1);
  });

  it('takes up what an earlier process kept, and two processes deliver each entry once', async () => {
    const platform = new FakePlatform();
    const delivery: PendingDelivery = { channel: 'fake', target, text: '', files: [] };
    const due = { nextAttemptAt: Date.now(), deadline: Date.now() + 60_000, lastError: 'CHANNEL_UNAVAILABLE: before the restart', isDead: false };
    for (let i = 0; i < 30; i++) await store.add({ ...delivery, text: `answer ${i}` }, due);
    startOutbox(platform);
    startOutbox(platform);
    await vi.waitFor(() => expect(platform.finals).toHaveLength(30), { timeout: 30_000, interval: 20 });
    await vi.waitFor(async () => expect(await store.counts()).toEqual({ pending: 0, dead: 0 }), { timeout: 30_000, interval: 20 });
    expect(new Set(platform.finals.map((f) => f.text)).size).toBe(30);
    expect(platform.finals).toHaveLength(30);
  });

  it('keeps only the parts of a split final not shown yet, and sends them after the last part shown', async () => {
    const chat = new SplitChat();
    const outbox = startOutbox(chat);
    // Part one edits the placeholder; part two is rate limited longer than a final waits in its turn.
    chat.failures.push(undefined, rateLimited(300));
    await outbox.durable('fake', target, chat.reply(target)).finish(threePartFinal);
    expect(await outbox.list('pending')).toMatchObject([{ text: 'part two.\npart three.', target: { ...target, replyTo: { messageId: '8' } } }]);
    await vi.waitFor(async () => expect(await outbox.counts()).toEqual({ pending: 0, dead: 0 }), { timeout: 30_000, interval: 20 });
    expect(chat.messages).toEqual(threePartsShown);
  });

  it('keeps what is left again, after the part it got out, when a retry also fails part-way', async () => {
    const chat = new SplitChat();
    const metrics = recordingMetrics();
    const outbox = startOutbox(chat, { metrics });
    // The turn shows part one; the first retry shows part two and meets a longer rate limit on part three.
    chat.failures.push(undefined, rateLimited(300), undefined, rateLimited(1500));
    await outbox.durable('fake', target, chat.reply(target)).finish(threePartFinal);
    await vi.waitFor(async () => expect(await outbox.list('pending')).toMatchObject([{ text: 'part three.', target: { ...target, replyTo: { messageId: '100' } } }]), {
      timeout: 30_000,
      interval: 20,
    });
    expect(chat.messages).toEqual(threePartsShown.slice(0, 2));
    await vi.waitFor(async () => expect(await outbox.counts()).toEqual({ pending: 0, dead: 0 }), { timeout: 30_000, interval: 20 });
    expect(chat.messages).toEqual(threePartsShown);
    expect(metrics.events).toEqual(['fake:kept', 'fake:delivered']);
  });

  it('rejects with the platform error when a failed final cannot be kept either', async () => {
    const platform = new FakePlatform();
    const outbox = new Outbox({
      store: { ...store, add: async () => Promise.reject(new Error('database down')) } as unknown as SqlOutboxStore,
      channel: () => ({ egress: platform }),
      logger: silentLogger(),
      deadlineMs: 60_000,
    });
    platform.failures.push(unavailable());
    await expect(outbox.durable('fake', target, platform.reply(target)).finish('answer')).rejects.toMatchObject({ code: 'CHANNEL_UNAVAILABLE' });
  });

  it('hides a claimed entry from other takers until its lease ran out', async () => {
    const due = { nextAttemptAt: Date.now() - 1000, deadline: Date.now() + 60_000, lastError: 'x', isDead: false };
    await store.add({ channel: 'fake', target, text: 'answer', files: [] }, due);
    const [claimed] = await store.claimDue(10, 60_000);
    expect(claimed).toMatchObject({ text: 'answer', attempts: 2, target });
    expect(await store.claimDue(10, 60_000)).toEqual([]);
    const movedOn: ReplyTarget = { ...target, replyTo: { messageId: '101' } };
    await store.retryLater(claimed?.id as number, { target: movedOn, text: 'rest', files: [file('a.txt')] }, Date.now() - 1, 'y');
    const [again] = await store.claimDue(10, 0);
    expect(again).toMatchObject({ target: movedOn, text: 'rest', files: [file('a.txt')], attempts: 3, lastError: 'y' });
    expect(await store.pruneDead(Date.now())).toBe(0);
    await store.bury(again?.id as number, { target, text: '', files: [] }, 'z');
    expect(await store.counts()).toEqual({ pending: 0, dead: 1 });
    expect(await store.list('dead', 10)).toMatchObject([{ target, text: '', files: [] }]);
    expect(await store.pruneDead(Date.now() + 1000)).toBe(1);
    expect(await store.counts()).toEqual({ pending: 0, dead: 0 });
  });
});
