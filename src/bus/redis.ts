import { createHash } from 'node:crypto';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { InboundMessage, InboundReservation } from '../channel/types.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { settledWithin, within } from '../time.js';
import { Reservations } from './reservations.js';
import type { BusStats, BusStopReport, InboundBus, InboundHandler } from './types.js';

export interface RedisBusOptions {
  /** `redis://…` */
  url: string;
  /** Messages waiting in the shared queue (all processes) past which new ones are refused. */
  maxQueued: number;
  /** Messages this process handles at once. */
  concurrency: number;
  logger: Logger;
  /** Key prefix; processes of one deployment share it. Default `deerflow`. */
  prefix?: string;
  /**
   * How soon a message whose process died mid-way is handed to another worker: its lock lasts
   * half of this and is checked every half. Default 30 s.
   */
  handoverMs?: number;
}

const QUEUE_NAME = 'inbound';
const JOB_NAME = 'message';
/** Failed jobs kept for inspection (`bull:…:failed`); the handler reports its own errors, so few land there. */
const FAILED_JOBS_KEPT = 1000;
const DEFAULT_HANDOVER_MS = 10_000;
/** Longest wait for one Redis command of intake (and `ping`); past it the message is refused. */
const COMMAND_TIMEOUT_MS = 2000;
/** How long stopping waits for Redis to confirm; a Redis that is down must not hang shutdown. */
const CLOSE_TIMEOUT_MS = 5000;

/**
 * The scaled-out bus: one BullMQ queue in Redis that every process's ingress adds to and every
 * process's workers take from. An accepted message is in Redis before the caller acknowledges the
 * platform, survives the process that took it, and is handled by one worker at a time: a worker
 * whose process dies mid-message stops renewing its lock, and within `handoverMs` BullMQ hands
 * the message to another (`redelivered`). Admission still never waits: a queue holding
 * `maxQueued` waiting messages refuses at once.
 *
 * `commit` resolves once Redis holds the message; `stop` waits for adds under way. The job id is
 * derived from the platform's message id, so two processes receiving the same delivery enqueue it
 * once.
 */
export class RedisBus implements InboundBus {
  private readonly connection: Redis;
  private readonly queue: Queue<InboundMessage>;
  private worker: { worker: Worker<InboundMessage>; connection: Redis } | undefined;
  private readonly adds = new Set<Promise<unknown>>();
  private readonly inFlight = new Map<string, AbortController>();
  private readonly reservations = new Reservations();
  private refused = 0;
  private handled = 0;

  constructor(private readonly options: RedisBusOptions) {
    // Intake fails fast while Redis is down: the platform keeps the message and redelivers it.
    this.connection = new Redis(options.url, { maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS });
    this.connection.on('error', (error: unknown) => options.logger.warn({ err: describeError(error) }, 'Redis connection error'));
    this.queue = new Queue<InboundMessage>(QUEUE_NAME, { connection: this.connection, prefix: options.prefix ?? 'deerflow' });
    // Without a listener BullMQ prints every connection error to the console.
    this.queue.on('error', () => undefined);
  }

  async reserve(): Promise<InboundReservation> {
    this.reservations.assertOpen();
    if (await this.isFull()) {
      this.refused++;
      throw new AppError('INBOUND_QUEUE_FULL', 'inbound queue is full');
    }
    return this.reservations.take((message) => this.add(message));
  }

  async hasRoom(): Promise<boolean> {
    return this.reservations.isOpen && !(await this.isFull().catch(() => true));
  }

  /**
   * Messages waiting in Redis and reservations together fill the intake.
   *
   * @throws AppError `INBOUND_QUEUE_FULL` when Redis does not answer in time.
   */
  private async isFull(): Promise<boolean> {
    // BullMQ waits for the connection without a limit; intake must not.
    const waiting = await within(this.queue.getWaitingCount(), COMMAND_TIMEOUT_MS).catch((error: unknown) => {
      throw new AppError('INBOUND_QUEUE_FULL', 'inbound queue unreachable (Redis)', { cause: error });
    });
    return waiting + this.reservations.count >= this.options.maxQueued;
  }

  start(handler: InboundHandler): void {
    if (this.worker) throw new AppError('INTERNAL', 'bus already started');
    this.reservations.open();
    // A worker blocks its connection while it waits for jobs: it gets its own, which waits out a
    // Redis outage (BullMQ requires no per-command limit there).
    const connection = new Redis(this.options.url, { maxRetriesPerRequest: null });
    connection.on('error', () => undefined);
    const lockDuration = (this.options.handoverMs ?? DEFAULT_HANDOVER_MS) / 2;
    const worker = new Worker<InboundMessage>(QUEUE_NAME, (job, token) => this.handle(job, token, lockDuration, handler), {
      connection,
      prefix: this.options.prefix ?? 'deerflow',
      concurrency: this.options.concurrency,
      // A dead worker's lock runs out within half the handover and the next stall check, a quarter
      // later, hands its message on; a live worker renews every quarter, so a stall of the event
      // loop shorter than that never hands a message it still runs to another process.
      lockDuration,
      stalledInterval: (this.options.handoverMs ?? DEFAULT_HANDOVER_MS) / 4,
    });
    worker.on('error', (error) => this.options.logger.warn({ err: describeError(error) }, 'inbound worker error'));
    this.worker = { worker, connection };
  }

  /**
   * Closes intake, lets this process's messages in flight finish for `graceMs`, then aborts them.
   * Accepted messages nobody started stay in Redis for the other processes (or the next start):
   * nothing is discarded.
   */
  async stop(graceMs: number): Promise<BusStopReport> {
    this.reservations.close();
    await settledWithin(Promise.allSettled([...this.adds]), CLOSE_TIMEOUT_MS);
    const pending = this.inFlight.size;
    let cancelled = 0;
    if (this.worker) {
      const closing = this.worker.worker.close();
      if (!(await settledWithin(closing, graceMs))) {
        cancelled = this.inFlight.size;
        for (const controller of this.inFlight.values()) controller.abort();
      }
      // Aborted work ends at once; only a Redis that stopped answering keeps `close` waiting.
      await settledWithin(closing, CLOSE_TIMEOUT_MS);
      this.worker.connection.disconnect();
      this.worker = undefined;
    }
    await settledWithin(this.queue.close(), CLOSE_TIMEOUT_MS);
    this.connection.disconnect();
    if (cancelled > 0) this.options.logger.warn({ cancelled }, 'inbound bus stopped with unfinished work');
    return { drained: pending - cancelled, cancelled, discarded: 0 };
  }

  /** Rejects when Redis does not answer within 2 s. */
  async ping(): Promise<void> {
    await within(this.connection.ping(), COMMAND_TIMEOUT_MS);
  }

  /** This process's share: waiting messages belong to every process (`waiting()` counts them), so `queued` is 0. */
  stats(): BusStats {
    return { queued: 0, inFlight: this.inFlight.size, refused: this.refused };
  }

  /** How many accepted messages wait in Redis for any process's worker. */
  async waiting(): Promise<number> {
    return this.queue.getWaitingCount();
  }

  /** Resolves once Redis holds the message; rejects (`INBOUND_QUEUE_FULL`: cannot take it now) when Redis failed. */
  private async add(message: InboundMessage): Promise<void> {
    const jobId = jobIdOf(message);
    const adding = this.queue.add(JOB_NAME, message, {
      ...(jobId === undefined ? {} : { jobId }),
      removeOnComplete: true,
      removeOnFail: FAILED_JOBS_KEPT,
      attempts: 1,
    });
    this.adds.add(adding);
    try {
      // A late add still lands (ioredis replays it on reconnect); the job id keeps the platform's redelivery from doubling it.
      await within(adding, COMMAND_TIMEOUT_MS);
    } catch (error) {
      throw new AppError('INBOUND_QUEUE_FULL', 'inbound message could not be queued in Redis', { cause: error });
    } finally {
      this.adds.delete(adding);
    }
  }

  private async handle(job: Job<InboundMessage>, token: string | undefined, lockDuration: number, handler: InboundHandler): Promise<void> {
    const controller = new AbortController();
    const key = `${job.id}\n${++this.handled}`;
    this.inFlight.set(key, controller);
    // Renewing the lock is the check: it fails once another worker holds the job.
    const isStillHeld = async (): Promise<boolean> => {
      if (token === undefined) return true;
      const renewed = await within(job.extendLock(token, lockDuration), COMMAND_TIMEOUT_MS).catch(() => undefined);
      return renewed !== 0;
    };
    try {
      // BullMQ counts a job whose worker stopped renewing its lock (a dead process) as stalled.
      await handler(job.data, controller.signal, { redelivered: job.stalledCounter > 0, isStillHeld });
    } catch (error) {
      // The manager handles its own errors; reaching here is a bug, never a reason to retry.
      this.options.logger.error({ channel: job.data.channel, err: describeError(error) }, 'inbound handler threw');
    } finally {
      this.inFlight.delete(key);
    }
  }
}

/**
 * One job per platform message, whichever process enqueues it (BullMQ ignores an add whose id
 * exists). Ids may not contain `:`, so the key is hashed. Messages without an id get a random one.
 */
function jobIdOf(message: InboundMessage): string | undefined {
  if (message.messageId === undefined) return undefined;
  const key = [message.channel, message.workspaceId ?? '', message.chatId, message.messageId].join('\n');
  return `m-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}
