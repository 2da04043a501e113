import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryQueue } from '../../../../src/agent/memory/queue.js';
import type { MemoryJob } from '../../../../src/agent/memory/types.js';
import { createLogger } from '../../../../src/logger.js';

const DEBOUNCE_MS = 1000;

function job(threadId: string, text: string, userId = 'u1'): MemoryJob {
  return { userId, threadId, conversation: [{ role: 'user', content: text }] };
}

/** A promise to settle by hand. */
function deferred() {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

let ran: MemoryJob[];
let logs: Array<Record<string, unknown>>;
let run: (job: MemoryJob) => Promise<void>;
let queue: MemoryQueue;

function texts(): string[] {
  return ran.map((j) => j.conversation[0]?.content ?? '');
}

beforeEach(() => {
  vi.useFakeTimers();
  ran = [];
  logs = [];
  run = async (j) => void ran.push(j);
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void logs.push(JSON.parse(line)) } });
  queue = new MemoryQueue({ debounceMs: DEBOUNCE_MS, run: (j) => run(j), logger });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('MemoryQueue', () => {
  it('runs a job once its thread has been quiet for the debounce', async () => {
    queue.enqueue(job('t1', 'hello'));

    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS - 1);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(texts()).toEqual(['hello']);
  });

  it('replaces the waiting job of a thread with the newer one and restarts the wait', async () => {
    queue.enqueue(job('t1', 'first'));
    await vi.advanceTimersByTimeAsync(600);
    queue.enqueue(job('t1', 'second'));

    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS - 1);
    expect(ran).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(texts()).toEqual(['second']);
    await vi.advanceTimersByTimeAsync(10 * DEBOUNCE_MS);
    expect(texts()).toEqual(['second']);
  });

  it('runs different threads, and different users of one thread, independently', async () => {
    queue.enqueue(job('t1', 'thread one'));
    await vi.advanceTimersByTimeAsync(500);
    queue.enqueue(job('t2', 'thread two'));
    queue.enqueue(job('t1', 'other user', 'u2'));

    await vi.advanceTimersByTimeAsync(500);
    expect(texts()).toEqual(['thread one']);
    await vi.advanceTimersByTimeAsync(500);
    expect(texts().sort()).toEqual(['other user', 'thread one', 'thread two']);
  });

  it('never runs two jobs of one thread at once: a due job waits for the running one', async () => {
    const first = deferred();
    let active = 0;
    let maxActive = 0;
    run = async (j) => {
      active++;
      maxActive = Math.max(maxActive, active);
      ran.push(j);
      if (j.conversation[0]?.content === 'first') await first.promise;
      active--;
    };
    queue.enqueue(job('t1', 'first'));
    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS);
    queue.enqueue(job('t1', 'second'));
    await vi.advanceTimersByTimeAsync(5 * DEBOUNCE_MS);
    expect(texts()).toEqual(['first']);

    first.resolve();
    await vi.advanceTimersByTimeAsync(0);

    expect(texts()).toEqual(['first', 'second']);
    expect(maxActive).toBe(1);
  });

  it('flush runs every waiting job now and resolves when they have ended', async () => {
    queue.enqueue(job('t1', 'one'));
    queue.enqueue(job('t2', 'two'));

    await queue.flush();

    expect(texts().sort()).toEqual(['one', 'two']);
    expect(queue.size).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * DEBOUNCE_MS);
    expect(ran).toHaveLength(2);
  });

  it('flush waits for a running job and then runs the waiting one of its thread', async () => {
    const first = deferred();
    run = async (j) => {
      if (j.conversation[0]?.content === 'first') await first.promise;
      ran.push(j);
    };
    queue.enqueue(job('t1', 'first'));
    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS);
    queue.enqueue(job('t1', 'second'));

    let isFlushed = false;
    const flushing = queue.flush().then(() => {
      isFlushed = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(isFlushed).toBe(false);
    first.resolve();
    await flushing;

    expect(texts()).toEqual(['first', 'second']);
  });

  it('close runs the waiting jobs, then refuses new ones', async () => {
    queue.enqueue(job('t1', 'last words'));

    await queue.close({ timeoutMs: 5000 });

    expect(texts()).toEqual(['last words']);
    expect(queue.enqueue(job('t1', 'too late'))).toBe(false);
    await vi.advanceTimersByTimeAsync(10 * DEBOUNCE_MS);
    expect(texts()).toEqual(['last words']);
  });

  it('close gives up waiting after the timeout and says so', async () => {
    run = () => new Promise(() => {});
    queue.enqueue(job('t1', 'stuck'));

    const closing = queue.close({ timeoutMs: 2000 });
    await vi.advanceTimersByTimeAsync(2000);
    await closing;

    expect(logs).toContainEqual(expect.objectContaining({ level: 40, unfinishedJobs: 1, timeoutMs: 2000 }));
  });

  it('logs a failed job without its error message, and keeps running later jobs', async () => {
    run = async (j) => {
      if (j.conversation[0]?.content === 'boom') throw new Error('the user said: my password is hunter2');
      ran.push(j);
    };
    queue.enqueue(job('t1', 'boom'));
    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS);
    queue.enqueue(job('t1', 'fine'));
    await vi.advanceTimersByTimeAsync(DEBOUNCE_MS);

    expect(texts()).toEqual(['fine']);
    expect(logs).toContainEqual(expect.objectContaining({ level: 40, threadId: 't1', msg: 'memory job failed' }));
    expect(JSON.stringify(logs)).not.toContain('hunter2');
  });
});
