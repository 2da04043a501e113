import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../../src/channel/types.js';
import type { BufferedFollowUp } from '../../../src/db/repos/follow-ups-repo.js';
import { ThreadBusyError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { FOLLOW_UP_BATCH, FOLLOW_UP_CAP, type FollowUpStore, FollowUps, followUpText } from '../../../src/manager/follow-ups.js';
import type { RunInfo } from '../../../src/runtime/types.js';

const THREAD = '7c4b3a52-0000-4000-8000-000000000001';

function inbound(text: string): InboundMessage {
  return {
    channel: 'github',
    chatId: 'owner/repo#7',
    userId: 'octocat',
    workspaceId: 'owner',
    messageId: `delivery-${text}`,
    text,
    kind: 'chat',
    isPrivateChat: false,
    replyTo: {},
    receivedAt: 0,
  };
}

function runInfo(threadId: string, runId: string): RunInfo {
  return { run_id: runId, thread_id: threadId, assistant_id: 'lead_agent', status: 'pending', created_at: '', updated_at: '', metadata: {}, multitask_strategy: 'reject', kwargs: {} };
}

/** The follow-up buffer in memory: FollowUpsRepo's behaviour without a database. */
class MemoryFollowUpStore implements FollowUpStore {
  private readonly rows: (BufferedFollowUp & { threadId: string })[] = [];
  private nextId = 1;
  /** Runs inside `take`, after the batch was chosen and before it is returned: a race made visible. */
  onTake: ((threadId: string, batch: BufferedFollowUp[]) => Promise<void>) | undefined;

  async add(threadId: string, messageKey: string, message: Record<string, unknown>, cap: number): Promise<{ added: boolean; dropped: number }> {
    if (this.rows.some((row) => row.threadId === threadId && row.messageKey === messageKey)) return { added: false, dropped: 0 };
    this.rows.push({ id: this.nextId++, threadId, messageKey, message: structuredClone(message) });
    const mine = this.rows.filter((row) => row.threadId === threadId);
    const overflow = mine.slice(0, Math.max(0, mine.length - cap));
    for (const row of overflow) this.rows.splice(this.rows.indexOf(row), 1);
    return { added: true, dropped: overflow.length };
  }

  async take(threadId: string, limit: number): Promise<BufferedFollowUp[]> {
    const batch = this.rows.filter((row) => row.threadId === threadId).slice(0, limit);
    for (const row of batch) this.rows.splice(this.rows.indexOf(row), 1);
    const taken = batch.map(({ id, messageKey, message }) => ({ id, messageKey, message }));
    await this.onTake?.(threadId, taken);
    return taken;
  }

  async putBack(threadId: string, entries: readonly BufferedFollowUp[]): Promise<void> {
    for (const entry of entries) {
      if (this.rows.some((row) => row.id === entry.id || (row.threadId === threadId && row.messageKey === entry.messageKey))) continue;
      this.rows.push({ ...entry, threadId });
    }
    this.rows.sort((a, b) => a.id - b.id);
  }

  async threads(): Promise<string[]> {
    return [...new Set(this.rows.map((row) => row.threadId))];
  }

  /** Texts still waiting on the thread, oldest first. */
  texts(threadId: string): string[] {
    return this.rows.filter((row) => row.threadId === threadId).map((row) => row.message.text as string);
  }
}

/** `runtime.joinRun` whose runs end when the test says so; aborting the signal rejects, as the real one does. */
class FakeRuns {
  /** Every `joinRun` call, in order. */
  readonly joined: string[] = [];
  private readonly ended = new Set<string>();
  private readonly waiting = new Map<string, (() => void)[]>();

  joinRun = (threadId: string, runId: string, options?: { signal?: AbortSignal }): Promise<RunInfo> => {
    this.joined.push(runId);
    if (this.ended.has(runId)) return Promise.resolve(runInfo(threadId, runId));
    return new Promise((resolve, reject) => {
      const signal = options?.signal;
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      const waiters = this.waiting.get(runId) ?? [];
      waiters.push(() => resolve(runInfo(threadId, runId)));
      this.waiting.set(runId, waiters);
    });
  };

  /** Ends the run: everyone joined to it wakes up, later joins return at once. */
  end(runId: string): void {
    this.ended.add(runId);
    for (const wake of this.waiting.get(runId) ?? []) wake();
    this.waiting.delete(runId);
  }

  timesJoined(runId: string): number {
    return this.joined.filter((id) => id === runId).length;
  }
}

interface StartedBatch {
  threadId: string;
  texts: string[];
  text: string;
  runId: string;
}

/** Records every `startBatch`; the next calls fail with `failures`, in order, before any succeeds. */
class BatchRecorder {
  readonly started: StartedBatch[] = [];
  attempts = 0;
  readonly failures: Error[] = [];

  startBatch = async (threadId: string, messages: InboundMessage[], text: string): Promise<RunInfo> => {
    this.attempts++;
    const failure = this.failures.shift();
    if (failure) throw failure;
    const runId = `batch-${this.started.length + 1}`;
    this.started.push({ threadId, texts: messages.map((m) => m.text), text, runId });
    return runInfo(threadId, runId);
  };
}

/** Polls `condition` until it holds; background work runs on the event loop meanwhile. */
async function until(condition: () => boolean, what: string, deadlineMs = 5000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Lets pending background work run as far as it can without anything new happening. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

const texts = (n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('FollowUps', () => {
  let store: MemoryFollowUpStore;
  let runs: FakeRuns;
  let recorder: BatchRecorder;
  let followUps: FollowUps;

  beforeEach(() => {
    store = new MemoryFollowUpStore();
    runs = new FakeRuns();
    recorder = new BatchRecorder();
    followUps = new FollowUps({ store, runtime: runs, startBatch: recorder.startBatch, logger: silentLogger() });
  });

  afterEach(() => followUps.close());

  it('delivers what was buffered during a run only after that run ends, oldest first, as one turn', async () => {
    for (const text of ['first', 'second', 'third']) await followUps.buffer(THREAD, inbound(text), 'run-0');
    await until(() => runs.timesJoined('run-0') === 1, 'the watcher waits for run-0');
    await settle();
    expect(recorder.attempts).toBe(0);
    expect(store.texts(THREAD)).toEqual(['first', 'second', 'third']);

    runs.end('run-0');
    await until(() => recorder.started.length === 1, 'the batch starts');
    expect(recorder.started[0]).toEqual({
      threadId: THREAD,
      texts: ['first', 'second', 'third'],
      text: followUpText(['first', 'second', 'third']),
      runId: 'batch-1',
    });
    expect(store.texts(THREAD)).toEqual([]);

    runs.end('batch-1');
    await until(() => !followUps.isWatching(THREAD), 'the watcher leaves');
    expect(recorder.attempts).toBe(1);
  });

  it('ignores a second copy of one message', async () => {
    await followUps.buffer(THREAD, inbound('once'), 'run-0');
    await followUps.buffer(THREAD, inbound('once'), 'run-0');
    runs.end('run-0');
    await until(() => recorder.started.length === 1, 'the batch starts');
    expect(recorder.started[0]?.texts).toEqual(['once']);
  });

  it(`delivers a deep backlog in batches of ${FOLLOW_UP_BATCH}, each after the previous batch's run`, async () => {
    const all = texts(15);
    for (const text of all) await followUps.buffer(THREAD, inbound(text), 'run-0');
    runs.end('run-0');

    await until(() => runs.timesJoined('batch-1') === 1, 'the watcher waits for the first batch');
    await settle();
    expect(recorder.started.map((b) => b.texts)).toEqual([all.slice(0, 10)]);
    expect(store.texts(THREAD)).toEqual(all.slice(10));

    runs.end('batch-1');
    await until(() => runs.timesJoined('batch-2') === 1, 'the watcher waits for the second batch');
    expect(recorder.started.map((b) => b.texts)).toEqual([all.slice(0, 10), all.slice(10)]);
    expect(recorder.started[1]?.text).toBe(followUpText(all.slice(10)));

    runs.end('batch-2');
    await until(() => !followUps.isWatching(THREAD), 'the watcher leaves');
    expect(recorder.attempts).toBe(2);
  });

  it(`keeps only the newest ${FOLLOW_UP_CAP} messages of a thread`, async () => {
    const all = texts(FOLLOW_UP_CAP + 3);
    for (const text of all) await followUps.buffer(THREAD, inbound(text), 'run-0');
    expect(store.texts(THREAD)).toEqual(all.slice(3));
  });

  it('puts a batch back when another run took the thread, waits for that run, then delivers it', async () => {
    recorder.failures.push(new ThreadBusyError(THREAD, 'run-other'));
    await followUps.buffer(THREAD, inbound('a'), 'run-0');
    await followUps.buffer(THREAD, inbound('b'), 'run-0');
    runs.end('run-0');

    await until(() => runs.timesJoined('run-other') === 1, 'the watcher waits for the run that took the thread');
    await settle();
    expect(recorder.attempts).toBe(1);
    expect(recorder.started).toEqual([]);
    expect(store.texts(THREAD)).toEqual(['a', 'b']);

    runs.end('run-other');
    await until(() => recorder.started.length === 1, 'the retry starts');
    expect(recorder.started[0]?.texts).toEqual(['a', 'b']);
    expect(store.texts(THREAD)).toEqual([]);
  });

  it('leaves the thread to the next sweep after repeated busy answers without a run to wait for', async () => {
    recorder.failures.push(...Array.from({ length: 3 }, () => new ThreadBusyError(THREAD)));
    await followUps.buffer(THREAD, inbound('a'), 'run-0');
    runs.end('run-0');
    await until(() => !followUps.isWatching(THREAD), 'the watcher gives up');
    expect(recorder.attempts).toBe(3);
    expect(store.texts(THREAD)).toEqual(['a']);

    await followUps.sweep();
    await until(() => recorder.started.length === 1, 'the sweep delivers');
    expect(recorder.started[0]?.texts).toEqual(['a']);
  });

  it('leaves the thread to the next sweep when it stays busy with the very run it just waited for', async () => {
    recorder.failures.push(...Array.from({ length: 3 }, () => new ThreadBusyError(THREAD, 'run-0')));
    await followUps.buffer(THREAD, inbound('a'), 'run-0');
    runs.end('run-0');
    await until(() => !followUps.isWatching(THREAD), 'the watcher gives up');
    expect(recorder.attempts).toBe(3);
    expect(store.texts(THREAD)).toEqual(['a']);
  });

  it('puts a batch back on any other failure, stops watching, and lets a later sweep deliver it', async () => {
    recorder.failures.push(new Error('gateway down'));
    await followUps.buffer(THREAD, inbound('a'), 'run-0');
    await followUps.buffer(THREAD, inbound('b'), 'run-0');
    runs.end('run-0');

    await until(() => !followUps.isWatching(THREAD), 'the watcher stops');
    expect(recorder.attempts).toBe(1);
    expect(store.texts(THREAD)).toEqual(['a', 'b']);

    await followUps.sweep();
    await until(() => recorder.started.length === 1, 'the sweep delivers');
    expect(recorder.started[0]?.texts).toEqual(['a', 'b']);
    expect(store.texts(THREAD)).toEqual([]);
  });

  it('keeps one watcher per thread when more messages arrive while it waits', async () => {
    await followUps.buffer(THREAD, inbound('a'), 'run-0');
    await followUps.buffer(THREAD, inbound('b'), 'run-0');
    await until(() => runs.joined.length > 0, 'the watcher waits');
    await settle();
    expect(runs.joined).toEqual(['run-0']);

    runs.end('run-0');
    await until(() => recorder.started.length === 1, 'the batch starts');
    // Buffered while the batch's run holds the thread: the same watcher delivers it next.
    await followUps.buffer(THREAD, inbound('c'), 'batch-1');
    await settle();
    expect(runs.timesJoined('batch-1')).toBe(1);

    runs.end('batch-1');
    await until(() => recorder.started.length === 2, 'the next batch starts');
    expect(recorder.started.map((b) => b.texts)).toEqual([['a', 'b'], ['c']]);
  });

  it('delivers a message buffered just as the watcher found the buffer empty', async () => {
    await followUps.buffer(THREAD, inbound('a'), 'run-0');
    runs.end('run-0');
    await until(() => recorder.started.length === 1, 'the batch starts');

    let raced = false;
    store.onTake = async (threadId, batch) => {
      if (raced || batch.length > 0) return;
      raced = true;
      // The watcher has looked and found nothing, but has not left yet.
      await followUps.buffer(threadId, inbound('late'), 'batch-1');
    };
    runs.end('batch-1');
    await until(() => recorder.started.length === 2, 'the late message is delivered');
    expect(raced).toBe(true);
    expect(recorder.started[1]?.texts).toEqual(['late']);
    // The one watcher delivered it: the late buffer() did not start another one.
    expect(runs.timesJoined('batch-1')).toBe(1);
  });

  it('starts nothing after close, and leaves the buffer for the next process', async () => {
    await followUps.buffer(THREAD, inbound('a'), 'run-0');
    await until(() => runs.timesJoined('run-0') === 1, 'the watcher waits');
    followUps.close();
    runs.end('run-0');
    await until(() => !followUps.isWatching(THREAD), 'the watcher stops');

    await followUps.buffer(THREAD, inbound('b'), undefined);
    await followUps.sweep();
    await settle();
    expect(followUps.isWatching(THREAD)).toBe(false);
    expect(recorder.attempts).toBe(0);
    expect(store.texts(THREAD)).toEqual(['a', 'b']);
  });

  it('start() delivers what a stopped process left behind', async () => {
    const other = '7c4b3a52-0000-4000-8000-000000000002';
    await store.add(THREAD, 'k1', { ...inbound('left') }, FOLLOW_UP_CAP);
    await store.add(other, 'k2', { ...inbound('behind') }, FOLLOW_UP_CAP);
    followUps.start(60_000);
    await until(() => recorder.started.length === 2, 'both threads are delivered');
    expect(recorder.started.map((b) => [b.threadId, b.texts])).toEqual(
      expect.arrayContaining([
        [THREAD, ['left']],
        [other, ['behind']],
      ]),
    );
  });
});

describe('followUpText', () => {
  it('numbers, escapes and indents the texts inside the reference block', () => {
    expect(followUpText([`Fix <b>this</b> & "that"`, "it's\nline two\n\nline four"])).toBe(
      [
        '<followups-while-busy>',
        'The following messages arrived on this thread while a previous run was still in progress. They were queued and are now delivered together as one turn:',
        '',
        '1. Fix &lt;b&gt;this&lt;/b&gt; &amp; &quot;that&quot;',
        '2. it&#x27;s',
        '   line two',
        '   ',
        '   line four',
        '</followups-while-busy>',
      ].join('\n'),
    );
  });

  it('escapes an ampersand before the entities it introduces', () => {
    expect(followUpText(['&lt;'])).toContain('\n1. &amp;lt;\n');
  });
});
