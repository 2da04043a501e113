import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryTurnJournal } from '../../../src/channel/turn-journal.js';
import type { ChannelCapabilities } from '../../../src/channel/types.js';
import type { DatabaseHandle } from '../../../src/db/index.js';
import { ThreadMapRepo } from '../../../src/db/repos/thread-map-repo.js';
import { ThreadBusyError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { ChannelManager } from '../../../src/manager/channel-manager.js';
import { MESSAGES } from '../../../src/manager/messages.js';
import { ThreadResolver } from '../../../src/manager/threads.js';
import type { RunRequest, ThreadInfo } from '../../../src/runtime/types.js';
import { openTestDatabase } from '../../helpers/database.js';
import { inboundIn, RecordingEgress, ScriptedRuntime, STREAMING, values } from './fixtures.js';

/** A runtime whose runs end when the test says so, and which refuses a second run on a busy thread. */
class HeldRuntime extends ScriptedRuntime {
  private readonly busy = new Set<string>();
  readonly releases: (() => void)[] = [];

  override async streamRun(threadId: string, request: RunRequest) {
    if (this.busy.has(threadId)) throw new ThreadBusyError(threadId);
    this.busy.add(threadId);
    this.requests.push({ threadId, request });
    const held = new Promise<void>((resolve) => this.releases.push(resolve));
    const text = request.input?.messages[0]?.content ?? '';
    const done = () => this.busy.delete(threadId);
    async function* events() {
      await held;
      done();
      yield values(`answer to ${text}`);
    }
    return { run: { run_id: 'r', thread_id: threadId } as never, events: events() };
  }

  /** What every process sees of the thread: busy while a run holds it. */
  override async getThread(threadId: string): Promise<ThreadInfo> {
    return { thread_id: threadId, created_at: '', updated_at: '', metadata: {}, status: this.busy.has(threadId) ? 'busy' : 'idle', values: null, interrupts: {} };
  }
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

describe('serialized thread runs (reference §4.7)', () => {
  let database: DatabaseHandle;
  beforeAll(async () => {
    database = await openTestDatabase('pglite');
  });
  afterAll(() => database.close());

  function managerFor(capabilities: ChannelCapabilities, runtime = new HeldRuntime()) {
    const egress = new RecordingEgress();
    const manager = new ChannelManager({
      runtime,
      threads: new ThreadResolver(new ThreadMapRepo(database.db), runtime),
      turns: new MemoryTurnJournal(),
      channel: () => ({ egress, capabilities }),
      logger: silentLogger(),
    });
    return { runtime, egress, manager };
  }

  it('queues a second message of a busy thread, says so, and answers it after the first', async () => {
    const { runtime, egress, manager } = managerFor({ ...STREAMING, serializesThreadRuns: true });
    const chatId = `serial-${Date.now()}`;
    const signal = new AbortController().signal;
    const first = manager.handle(inboundIn(chatId, 'one'), signal);
    await until(() => runtime.releases.length === 1);
    const second = manager.handle(inboundIn(chatId, 'two'), signal);
    await until(() => egress.replies[1]?.updates.includes(MESSAGES.queuedBehind) === true);
    expect(runtime.requests).toHaveLength(1);

    runtime.releases[0]?.();
    await first;
    await until(() => runtime.releases.length === 2);
    expect(egress.replies[1]?.updates).toEqual([MESSAGES.queuedBehind, MESSAGES.queuedStarted]);
    runtime.releases[1]?.();
    await second;
    expect(egress.finals).toEqual(['answer to one', 'answer to two']);
  });

  it('queues behind a run of another process on the same thread (scaled out), then answers', async () => {
    // Two processes: their own managers and queues, one runtime view (runs live in the database).
    const a = managerFor({ ...STREAMING, serializesThreadRuns: true });
    const b = managerFor({ ...STREAMING, serializesThreadRuns: true }, a.runtime);
    const chatId = `scaled-${Date.now()}`;
    const signal = new AbortController().signal;
    const first = a.manager.handle(inboundIn(chatId, 'one'), signal);
    await until(() => a.runtime.releases.length === 1);
    const second = b.manager.handle(inboundIn(chatId, 'two'), signal);
    await until(() => b.egress.replies[0]?.updates.includes(MESSAGES.queuedBehind) === true);
    a.runtime.releases[0]?.();
    await first;
    await until(() => a.runtime.releases.length === 2);
    expect(b.egress.replies[0]?.updates).toEqual([MESSAGES.queuedBehind, MESSAGES.queuedStarted]);
    a.runtime.releases[1]?.();
    await second;
    expect([...a.egress.finals, ...b.egress.finals]).toEqual(['answer to one', 'answer to two']);
  });

  it('refuses the second message as busy on a platform that does not serialize', async () => {
    const { runtime, egress, manager } = managerFor(STREAMING);
    const chatId = `parallel-${Date.now()}`;
    const signal = new AbortController().signal;
    const first = manager.handle(inboundIn(chatId, 'one'), signal);
    await until(() => runtime.releases.length === 1);
    await manager.handle(inboundIn(chatId, 'two'), signal);
    expect(egress.replies[1]?.finals).toEqual([MESSAGES.threadBusy]);
    runtime.releases[0]?.();
    await first;
    expect(egress.replies[0]?.finals).toEqual(['answer to one']);
    expect(egress.replies[1]?.updates).toEqual([]);
  });
});
