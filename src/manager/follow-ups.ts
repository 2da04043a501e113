import { randomUUID } from 'node:crypto';
import { dedupeKeyOf } from '../channel/turn-journal.js';
import type { InboundMessage } from '../channel/types.js';
import type { BufferedFollowUp, FollowUpsRepo } from '../db/repos/follow-ups-repo.js';
import { AppError, describeError, ThreadBusyError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentRuntime, RunInfo } from '../runtime/types.js';

/**
 * Follow-ups of busy fire-and-forget threads (reference §4.10): a message that finds its thread
 * busy waits in the database, and when the thread is free up to {@link FOLLOW_UP_BATCH} of them
 * run as one turn. Beyond the reference, the buffer is shared by every process and survives a
 * restart: whoever holds it, a waiting message is delivered.
 */

/** Entries kept per thread; the oldest is dropped beyond it. */
export const FOLLOW_UP_CAP = 20;
/** Entries delivered in one turn; deeper backlogs chain, one batch per run. */
export const FOLLOW_UP_BATCH = 10;
/** How often threads with waiting follow-ups and no watcher here are looked at (a stopped process's leftovers). */
export const FOLLOW_UP_SWEEP_MS = 30_000;
/** Busy answers with no new run to wait for, in a row, before leaving the thread to the next sweep. */
const MAX_UNEXPLAINED_BUSY = 3;

/** The store {@link FollowUps} needs; `FollowUpsRepo` implements it. */
export type FollowUpStore = Pick<FollowUpsRepo, 'add' | 'take' | 'putBack' | 'threads'>;

export interface FollowUpsDeps {
  store: FollowUpStore;
  runtime: Pick<AgentRuntime, 'joinRun'>;
  /**
   * Starts one run for a batch (oldest first) with the combined text; the manager builds it as
   * the newest message would run. Throws `ThreadBusyError` when the thread is busy again.
   */
  startBatch(threadId: string, messages: InboundMessage[], text: string): Promise<RunInfo>;
  logger: Logger;
}

interface Watcher {
  /** Set when a message was buffered while the watcher was already running; it looks once more before leaving. */
  recheck: boolean;
}

export class FollowUps {
  private readonly watchers = new Map<string, Watcher>();
  private readonly closing = new AbortController();
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: FollowUpsDeps) {}

  /**
   * Buffers `message` for `threadId` and makes sure someone delivers it once `activeRunId` (the run
   * holding the thread) ends. A message already buffered (same dedupe key) is not added twice.
   */
  async buffer(threadId: string, message: InboundMessage, activeRunId: string | undefined): Promise<void> {
    const key = followUpKey(message);
    const { added, dropped } = await this.deps.store.add(threadId, key, message as unknown as Record<string, unknown>, FOLLOW_UP_CAP);
    const log = { threadId, channel: message.channel };
    if (!added) this.deps.logger.info(log, 'follow-up already buffered; ignored');
    else this.deps.logger.info(log, 'thread busy; follow-up buffered');
    if (dropped > 0) this.deps.logger.warn({ ...log, dropped, cap: FOLLOW_UP_CAP }, 'follow-up buffer full; dropped the oldest');
    this.watch(threadId, activeRunId);
  }

  /** Delivers what waits for `threadId` after `runId` (if given) ends. One watcher per thread in this process. */
  watch(threadId: string, runId?: string): void {
    if (this.closing.signal.aborted) return;
    const existing = this.watchers.get(threadId);
    if (existing) {
      existing.recheck = true;
      return;
    }
    const watcher: Watcher = { recheck: false };
    this.watchers.set(threadId, watcher);
    void this.deliver(threadId, runId, watcher);
  }

  /** Looks now and every {@link FOLLOW_UP_SWEEP_MS} for threads whose follow-ups nobody here is delivering. */
  start(intervalMs = FOLLOW_UP_SWEEP_MS): void {
    void this.sweep();
    this.sweepTimer = setInterval(() => void this.sweep(), intervalMs);
    this.sweepTimer.unref();
  }

  /** Stops sweeping and waiting; buffered entries stay in the database for the next process. */
  close(): void {
    clearInterval(this.sweepTimer);
    this.closing.abort();
  }

  /** Watches every thread with buffered follow-ups that has no watcher here yet. */
  async sweep(): Promise<void> {
    try {
      for (const threadId of await this.deps.store.threads()) this.watch(threadId);
    } catch (error) {
      this.deps.logger.warn({ err: describeError(error) }, 'follow-up sweep failed');
    }
  }

  /** Whether a watcher of this process is delivering `threadId`'s follow-ups (for tests and /health). */
  isWatching(threadId: string): boolean {
    return this.watchers.has(threadId);
  }

  private async deliver(threadId: string, firstRunId: string | undefined, watcher: Watcher): Promise<void> {
    let waitFor = firstRunId;
    let unexplainedBusy = 0;
    try {
      for (;;) {
        if (waitFor !== undefined) await this.join(threadId, waitFor);
        if (this.closing.signal.aborted) break;
        const batch = await this.deps.store.take(threadId, FOLLOW_UP_BATCH);
        if (batch.length === 0) {
          // Synchronous from here to the delete: a `watch` call either sees this watcher and sets
          // `recheck`, or finds none and starts its own.
          if (!watcher.recheck) break;
          watcher.recheck = false;
          waitFor = undefined;
          continue;
        }
        try {
          const messages = batch.map((entry) => entry.message as unknown as InboundMessage);
          const run = await this.deps.startBatch(threadId, messages, followUpText(messages.map((m) => m.text)));
          this.deps.logger.info({ threadId, runId: run.run_id, messages: batch.length }, 'follow-ups delivered as one turn');
          waitFor = run.run_id;
          unexplainedBusy = 0;
        } catch (error) {
          await this.putBack(threadId, batch);
          if (!(error instanceof ThreadBusyError)) throw error;
          // Someone else took the thread first: wait for that run, then try again. Busy without a
          // run to wait for, or busy again with the run just waited for (clocks disagreeing on
          // its lease), is given a few tries before the sweep takes over.
          const isUnexplained = error.activeRunId === undefined || error.activeRunId === waitFor;
          if (isUnexplained && ++unexplainedBusy >= MAX_UNEXPLAINED_BUSY) break;
          waitFor = error.activeRunId;
        }
      }
    } catch (error) {
      // The entries are back in the buffer; the next sweep (or the next busy message) retries.
      this.deps.logger.warn({ threadId, err: describeError(error) }, 'follow-ups could not be delivered; will retry');
    } finally {
      this.watchers.delete(threadId);
    }
  }

  /** Waits for a run to end; a failure to look (a run deleted, the database down for a moment) counts as ended. */
  private async join(threadId: string, runId: string): Promise<void> {
    try {
      await this.deps.runtime.joinRun(threadId, runId, { signal: this.closing.signal });
    } catch (error) {
      if (this.closing.signal.aborted) return;
      if (!(error instanceof AppError && error.code === 'NOT_FOUND')) {
        this.deps.logger.warn({ threadId, runId, err: describeError(error) }, 'could not wait for the run; trying the follow-ups now');
      }
    }
  }

  private async putBack(threadId: string, batch: BufferedFollowUp[]): Promise<void> {
    try {
      await this.deps.store.putBack(threadId, batch);
    } catch (error) {
      this.deps.logger.error({ threadId, messages: batch.length, err: describeError(error) }, 'follow-ups lost: could not put them back');
    }
  }
}

/** The message's dedupe key, so a redelivered copy is not buffered twice; a message without one is always new. */
function followUpKey(message: InboundMessage): string {
  const key = dedupeKeyOf(message);
  return key ? JSON.stringify([key.channel, key.workspaceId, key.chatId, key.messageId]) : `__no_id__:${randomUUID()}`;
}

/** Python's `html.escape(text, quote=True)`, as the reference escapes buffered texts. */
function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}

/**
 * The one human message a batch of follow-ups becomes (reference §4.10): numbered, escaped, with
 * continuation lines indented by three spaces, inside `<followups-while-busy>`.
 */
export function followUpText(texts: readonly string[]): string {
  const items = texts.map((text, index) => `${index + 1}. ${escapeHtml(text).replace(/\n/g, '\n   ')}`);
  return [
    '<followups-while-busy>',
    'The following messages arrived on this thread while a previous run was still in progress. They were queued and are now delivered together as one turn:',
    '',
    ...items,
    '</followups-while-busy>',
  ].join('\n');
}
