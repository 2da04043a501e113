import { ChannelError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ChannelEgress, ChannelFiles, OutboundFile, Reply, ReplyOutcome, ReplyTarget } from './types.js';

/**
 * The outbox (issue #15): a final, an error notice or files that the platform would not take
 * now are kept in the database and sent again, from any process and after a restart, until
 * delivered or their deadline passed. Past it, or refused for good, they become a dead letter
 * the operator sees (`/health`, `/metrics`, the CLI) and can send again.
 *
 * The first attempt is the reply itself, in the turn that made it: the outbox costs nothing
 * while platforms take what we send. Until a delivery is kept here, the turn journal holds its
 * message, so a crash before that point is taken up as an unfinished turn.
 */

/** What is left to deliver of one reply. */
export interface PendingDelivery {
  channel: string;
  /**
   * Where it goes; `replyTo` names the message that shows the reply so far (it is finished in
   * place), or, once parts of a split final are out, the last of them (the rest follows it).
   */
  target: ReplyTarget;
  /** What of the final text is not on screen yet; '' once it is out and only files are left. */
  text: string;
  outcome?: ReplyOutcome;
  files: readonly OutboundFile[];
}

export interface OutboxEntry extends PendingDelivery {
  id: number;
  attempts: number;
  /** Milliseconds since the epoch. */
  createdAt: number;
  nextAttemptAt: number;
  deadline: number;
  /** Why the last attempt failed; secret-free. */
  lastError?: string;
  /** Set for a dead letter. */
  deadAt?: number;
}

export interface OutboxCounts {
  /** Kept, waiting for their next attempt. */
  pending: number;
  /** Dead letters: not delivered by their deadline, or refused by the platform for good. */
  dead: number;
}

/** What is left of a kept delivery after an attempt that got part of it out. */
export type DeliveryLeft = Pick<PendingDelivery, 'target' | 'text' | 'files'>;

/** Where the outbox keeps its entries: the database, shared by every process. */
export interface OutboxStore {
  /** Keeps `delivery`; a dead letter at once when `isDead`. Resolves with its id. */
  add(delivery: PendingDelivery, state: { nextAttemptAt: number; deadline: number; lastError: string; isDead: boolean }): Promise<number>;
  /**
   * Takes up to `limit` entries that are due, counting an attempt on each and hiding it from
   * every other taker until `leaseMs` from now (after which a crashed taker's entry is due again).
   */
  claimDue(limit: number, leaseMs: number): Promise<OutboxEntry[]>;
  delivered(id: number): Promise<void>;
  /** What is left of entry `id` and where it continues, to try again at `nextAttemptAt`. */
  retryLater(id: number, left: DeliveryLeft, nextAttemptAt: number, lastError: string): Promise<void>;
  /** Makes entry `id` a dead letter with what is left of it. */
  bury(id: number, left: DeliveryLeft, lastError: string): Promise<void>;
  /** Dead letters (one by id, or all) due again now with a new deadline; resolves with how many. */
  revive(which: number | 'all', deadline: number): Promise<number>;
  /** Entries, oldest first. */
  list(which: 'pending' | 'dead', limit: number): Promise<OutboxEntry[]>;
  counts(): Promise<OutboxCounts>;
  /** Forgets dead letters that died before `before`; resolves with how many. */
  pruneDead(before: number): Promise<number>;
}

/** What the outbox counts (`GET /metrics`). Labels are channel names only. */
export interface OutboxMetrics {
  /** A delivery failed and was kept (`kept`), delivered by a later attempt (`delivered`), or became a dead letter (`dead`). */
  outboxEvent(channel: string, event: 'kept' | 'delivered' | 'dead'): void;
}

/** The parts of a channel the outbox sends through; every process has them, also in standby. */
export interface OutboxChannel {
  egress: ChannelEgress;
  files?: ChannelFiles;
}

export interface OutboxDeps {
  store: OutboxStore;
  /** A configured channel by name; undefined when it is not configured in this process. */
  channel: (name: string) => OutboxChannel | undefined;
  logger: Logger;
  /** How long a delivery is tried before it becomes a dead letter (`channels.outbox_deadline_seconds`). */
  deadlineMs: number;
  metrics?: OutboxMetrics;
  now?: () => number;
  /** How often the store is looked at for entries kept by other processes or before a restart. */
  pollMs?: number;
}

/** A reply whose final (and the files after it) goes through the outbox. */
export interface DurableReply extends Reply {
  /**
   * Delivers the final text, then `files`. Resolves once delivered or kept in the outbox (or
   * made a dead letter); rejects only when a failed delivery could not be kept either.
   */
  finish(text: string, outcome?: ReplyOutcome, files?: readonly OutboundFile[]): Promise<void>;
}

const DEFAULT_POLL_MS = 10_000;
/** Longer than any one attempt (a reply's own rate-limit retries wait out up to five `retry_after`s). */
const CLAIM_LEASE_MS = 5 * 60_000;
const CLAIM_BATCH = 20;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;
/** Dead letters are kept this long for the operator. */
const DEAD_LETTER_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export class Outbox {
  private readonly now: () => number;
  private readonly pollMs: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires; an earlier due entry re-arms it. */
  private wakeAt: number | undefined;
  private draining: Promise<void> | undefined;
  private isStopped = true;

  constructor(private readonly deps: OutboxDeps) {
    this.now = deps.now ?? Date.now;
    this.pollMs = deps.pollMs ?? DEFAULT_POLL_MS;
  }

  /**
   * `reply`, with its final and files delivered through the outbox. `onRefused` is told when the
   * platform refuses the final for good (the bot was removed from the chat): it is a dead letter.
   */
  durable(channel: string, target: ReplyTarget, reply: Reply, onRefused?: () => void): DurableReply {
    let finishing: Promise<void> | undefined;
    return {
      update: (text) => reply.update(text),
      abandon: () => {
        finishing ??= Promise.resolve();
        reply.abandon?.();
      },
      resumeAnchor: () => reply.resumeAnchor?.() ?? target.replyTo,
      finish: (text, outcome, files = []) => {
        finishing ??= this.deliverNow({ channel, target, reply, onRefused }, text, outcome, files);
        return finishing;
      },
    };
  }

  /** Starts sending what is due, now and whenever more falls due. */
  start(): void {
    this.isStopped = false;
    this.wake(this.now());
  }

  /** Stops taking entries; an attempt under way ends first. */
  async stop(): Promise<void> {
    this.isStopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.draining;
  }

  counts(): Promise<OutboxCounts> {
    return this.deps.store.counts();
  }

  list(which: 'pending' | 'dead', limit = 100): Promise<OutboxEntry[]> {
    return this.deps.store.list(which, limit);
  }

  /** Sends dead letters again, with a fresh deadline; resolves with how many. */
  async retryDead(which: number | 'all'): Promise<number> {
    const revived = await this.deps.store.revive(which, this.now() + this.deps.deadlineMs);
    if (revived > 0) this.wake(this.now());
    return revived;
  }

  /** Forgets dead letters older than a week; resolves with how many. */
  pruneDeadLetters(): Promise<number> {
    return this.deps.store.pruneDead(this.now() - DEAD_LETTER_RETENTION_MS);
  }

  /** The first attempt, in the turn: the reply's own final, then each file. */
  private async deliverNow(
    { channel, target, reply, onRefused }: { channel: string; target: ReplyTarget; reply: Reply; onRefused: (() => void) | undefined },
    text: string,
    outcome: ReplyOutcome | undefined,
    files: readonly OutboundFile[],
  ): Promise<void> {
    const pending = (left: DeliveryLeft): PendingDelivery => ({ channel, ...(outcome === undefined ? {} : { outcome }), ...left });
    // A later attempt finishes the message this reply streamed into, not a new one. Asked once
    // the final is over: a partial still in flight when it began may have posted that message.
    const resumed = (): ReplyTarget => ({ ...target, replyTo: reply.resumeAnchor?.() ?? target.replyTo });
    try {
      await reply.finish(text, outcome);
    } catch (error) {
      const isDead = await this.keep(pending({ ...finalLeftOf(reply, text, resumed()), files }), error);
      if (isDead) onRefused?.();
      return;
    }
    const failure = await this.sendFiles(channel, target, files);
    if (failure) await this.keep(pending({ target: resumed(), text: '', files: files.slice(failure.index) }), failure.error);
  }

  /**
   * Sends files in order; a file the platform refuses for good (too large) is skipped as
   * before. Resolves with the first file that failed for now, to keep it and those after it.
   */
  private async sendFiles(channel: string, target: ReplyTarget, files: readonly OutboundFile[]): Promise<{ index: number; error: unknown } | undefined> {
    const sender = this.deps.channel(channel)?.files;
    if (!sender) return undefined;
    for (const [index, file] of files.entries()) {
      try {
        await sender.send(target, file);
      } catch (error) {
        if (isTransient(error)) return { index, error };
        this.deps.logger.warn({ channel, chatId: target.chatId, size: file.size, err: describeError(error) }, 'file not delivered');
      }
    }
    return undefined;
  }

  /** Keeps a failed first attempt; true when it is a dead letter (refused for good). Rethrows its error when the store cannot take it. */
  private async keep(delivery: PendingDelivery, error: unknown): Promise<boolean> {
    const log = this.deps.logger.child({ channel: delivery.channel, chatId: delivery.target.chatId });
    const isDead = !isTransient(error);
    const nextAttemptAt = this.now() + retryDelayMs(error, 1);
    try {
      const id = await this.deps.store.add(delivery, {
        nextAttemptAt,
        deadline: this.now() + this.deps.deadlineMs,
        lastError: reasonOf(error),
        isDead,
      });
      log.warn({ outboxId: id, err: describeError(error), isDead }, isDead ? 'reply refused by the platform; kept as a dead letter' : 'reply not delivered; kept in the outbox');
      this.deps.metrics?.outboxEvent(delivery.channel, isDead ? 'dead' : 'kept');
    } catch (storeError) {
      log.error({ err: describeError(storeError) }, 'a reply that failed could not be kept in the outbox');
      throw error;
    }
    if (!isDead) this.wake(nextAttemptAt);
    return isDead;
  }

  /** Arms the timer for `at` unless it fires sooner already. */
  private wake(at: number): void {
    if (this.isStopped || (this.wakeAt !== undefined && this.wakeAt <= at)) return;
    clearTimeout(this.timer);
    this.wakeAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wakeAt = undefined;
      // After a drain under way: it may have looked already, before this entry fell due.
      const drained = (this.draining ?? Promise.resolve()).then(() => this.drain());
      this.draining = drained;
      void drained.finally(() => {
        if (this.draining !== drained) return;
        this.draining = undefined;
        this.wake(this.now() + this.pollMs);
      });
    }, Math.max(0, at - this.now()));
    this.timer.unref();
  }

  /** Sends every entry that is due, batch by batch. Never rejects. */
  private async drain(): Promise<void> {
    while (!this.isStopped) {
      let entries: OutboxEntry[];
      try {
        entries = await this.deps.store.claimDue(CLAIM_BATCH, CLAIM_LEASE_MS);
      } catch (error) {
        this.deps.logger.warn({ err: describeError(error) }, 'the outbox could not be read; trying again later');
        return;
      }
      if (entries.length === 0) return;
      await Promise.all(entries.map((entry) => this.attempt(entry)));
    }
  }

  /** One more attempt at a kept delivery. Never rejects. */
  private async attempt(entry: OutboxEntry): Promise<void> {
    const log = this.deps.logger.child({ channel: entry.channel, chatId: entry.target.chatId, outboxId: entry.id });
    const channel = this.deps.channel(entry.channel);
    try {
      if (!channel) {
        await this.failed(entry, entry, new ChannelError(entry.channel, 'CHANNEL_UNAVAILABLE', 'channel is not configured in this process'), log);
        return;
      }
      if (entry.text !== '') {
        const reply = channel.egress.reply(entry.target);
        try {
          await reply.finish(entry.text, entry.outcome);
        } catch (error) {
          await this.failed(entry, { ...finalLeftOf(reply, entry.text, entry.target), files: entry.files }, error, log);
          return;
        }
      }
      const failure = await this.sendFiles(entry.channel, entry.target, entry.files);
      if (failure) {
        await this.failed(entry, { target: entry.target, text: '', files: entry.files.slice(failure.index) }, failure.error, log);
        return;
      }
      await this.deps.store.delivered(entry.id);
      log.info({ attempts: entry.attempts }, 'kept reply delivered');
      this.deps.metrics?.outboxEvent(entry.channel, 'delivered');
    } catch (error) {
      // The store failed: the claim runs out and the entry is due again then.
      log.warn({ err: describeError(error) }, 'outbox entry could not be updated');
    }
  }

  private async failed(entry: OutboxEntry, left: DeliveryLeft, error: unknown, log: Logger): Promise<void> {
    const nextAttemptAt = this.now() + retryDelayMs(error, entry.attempts + 1);
    if (isTransient(error) && nextAttemptAt < entry.deadline) {
      await this.deps.store.retryLater(entry.id, left, nextAttemptAt, reasonOf(error));
      log.warn({ attempts: entry.attempts, err: describeError(error) }, 'kept reply not delivered; trying again later');
      this.wake(nextAttemptAt);
      return;
    }
    await this.deps.store.bury(entry.id, left, reasonOf(error));
    log.error({ attempts: entry.attempts, err: describeError(error) }, 'kept reply not delivered; now a dead letter');
    this.deps.metrics?.outboxEvent(entry.channel, 'dead');
  }
}

/**
 * What is left of final `text` after `reply.finish` rejected: the parts not on screen, after the
 * last part shown (issue #15: nothing shown appears twice), or, with nothing shown, all of it at
 * `target`.
 */
function finalLeftOf(reply: Reply, text: string, target: ReplyTarget): Pick<PendingDelivery, 'target' | 'text'> {
  const left = reply.finalLeft?.();
  return left === undefined ? { target, text } : { target: { ...target, replyTo: left.anchor }, text: left.text };
}

/**
 * Whether sending again later may work: rate limits, an unreachable platform, errors we cannot
 * classify. A platform's refusal of the request itself (the chat is gone, the bot was removed,
 * the file is too large) will not change by waiting.
 */
function isTransient(error: unknown): boolean {
  if (!(error instanceof ChannelError)) return true;
  if (error.retryAfterMs !== undefined) return true;
  return !(error.code === 'CHANNEL_REJECTED' || error.code === 'FILE_TOO_LARGE' || error.code === 'FILE_UNAVAILABLE');
}

/** The platform's `retry_after` when it gave one, else a backoff doubling from 1 s to a minute. */
function retryDelayMs(error: unknown, attempt: number): number {
  if (error instanceof ChannelError && error.retryAfterMs !== undefined) return error.retryAfterMs;
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, attempt - 1));
}

/** A secret-free reason for the operator (no message text: errors name the method and code). */
function reasonOf(error: unknown): string {
  const { message } = describeError(error);
  return error instanceof ChannelError ? `${error.code}: ${message}` : message;
}
